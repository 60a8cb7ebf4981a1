package io.tierkv.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tierkv.core.event.KvMedium;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.events.KvEventBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fresh connections from a connecting publisher: JeroMQ 0.6.0 leaves about 1-6 % of them connected
 * over TCP but without a ZMTP handshake (zeromq/jeromq#1022: a cancelled selection key reused for
 * the new channel), so no subscription arrives and every batch is dropped until the handshake
 * timer reconnects (30 s by default). Seen here as "received 0 of 3" in 1 of 3 to 1 of 6 runs of
 * this module's end-to-end tests (2026-12-03, a ZeroMQ monitor showed CONNECTED and no
 * HANDSHAKE_PROTOCOL).
 */
class ZmqKvEventPublisherConnectTest {

    /** Fresh connections made: at 1 % each, 150 miss at least once with probability 0.78, at 3 % 0.99. */
    private static final int CONNECTIONS = 150;

    @Test
    void everyFreshConnectionDeliversItsFirstBatch() throws Exception {
        KvEventBatch batch = new KvEventBatch(0, 1.7e9, List.of(new KvEvent.BlockRemoved(
                new io.tierkv.core.event.KvBlockHash(1, 2), KvMedium.GPU)), 0);
        for (int i = 0; i < CONNECTIONS; i++) {
            try (EventIndexer indexer = new EventIndexer(false);
                 ZmqKvEventPublisher publisher = new ZmqKvEventPublisher(indexer.endpoint(), "", 0, 5_000)) {
                publisher.onBatch(batch); // waits for the subscription first
                KvEventsEndToEndTest.awaitSent(indexer, publisher);
                assertEquals(1, indexer.batchCount(), "connection " + i);
            }
        }
    }
}
