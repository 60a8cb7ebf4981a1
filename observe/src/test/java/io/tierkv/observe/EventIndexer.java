package io.tierkv.observe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A consumer written as a router's indexer would be: a SUB socket on loopback, read by its own
 * thread (a ZeroMQ socket attaches a new peer and sends its subscription only while its owner
 * uses it), that decodes every vLLM-format batch and keeps, from the events alone, block hash ->
 * media holding it. Also records every sequence number and every medium seen. Thread-safe: the
 * receiver applies batches under this object's monitor; the accessors take it too.
 */
final class EventIndexer implements AutoCloseable {

    private final Map<Long, Set<String>> media = new HashMap<>();
    private final List<Long> sequences = new ArrayList<>();
    private final Set<String> mediaSeen = new HashSet<>();
    private volatile boolean closing;
    private volatile Throwable failure;
    private final Thread receiver;
    int storedEvents;
    int removedEvents;
    int clears;
    int lastRank = -1;
    int lastBlockSize = -1;
    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket sub;
    final int port;

    /** Whether a store twice or a removal of what was not stored fails the indexer (no drops expected). */
    private final boolean strict;

    EventIndexer() {
        this(true);
    }

    EventIndexer(boolean strict) {
        this.strict = strict;
        sub = context.createSocket(SocketType.SUB);
        port = sub.bindToRandomPort("tcp://127.0.0.1");
        sub.subscribe(new byte[0]);
        sub.setReceiveTimeOut(20);
        receiver = Thread.ofPlatform().daemon().name("test-kv-event-indexer").start(this::receive);
    }

    private void receive() {
        try {
            while (!closing) {
                poll();
            }
        } catch (Throwable t) {
            failure = t;
        }
    }

    /** {@return batches received so far} */
    synchronized int batchCount() {
        check();
        return sequences.size();
    }

    /** {@return every medium a BlockStored named} */
    synchronized Set<String> mediaSeen() {
        check();
        return Set.copyOf(mediaSeen);
    }

    /** {@return the sequence numbers received, in order} */
    synchronized List<Long> sequences() {
        check();
        return List.copyOf(sequences);
    }

    private void check() {
        if (failure != null) {
            throw new AssertionError("indexer failed", failure);
        }
    }

    /** {@return the endpoint a publisher connects to} */
    String endpoint() {
        return "tcp://127.0.0.1:" + port;
    }

    /** Receives and applies every batch waiting now; returns how many. Receiver thread. */
    private int poll() throws IOException {
        int n = 0;
        for (;;) {
            byte[] topic = sub.recv();
            if (topic == null) {
                return n;
            }
            byte[] seq = sub.recv();
            byte[] payload = sub.recv();
            if (seq.length != 8 || sub.hasReceiveMore()) {
                throw new AssertionError("frames: seq " + seq.length + " bytes, more=" + sub.hasReceiveMore());
            }
            synchronized (this) {
                sequences.add(ByteBuffer.wrap(seq).getLong());
                apply(payload);
            }
            n++;
        }
    }

    private void apply(byte[] payload) throws IOException {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            expect(u.unpackArrayHeader() == 3, "batch array of 3");
            double ts = u.unpackDouble();
            expect(ts > 1.6e9, "ts in seconds since the epoch: " + ts);
            int events = u.unpackArrayHeader();
            for (int i = 0; i < events; i++) {
                int fields = u.unpackArrayHeader();
                String tag = u.unpackString();
                switch (tag) {
                    case "BlockStored" -> {
                        expect(fields == 8, "BlockStored fields " + fields);
                        List<Long> hashes = hashes(u);
                        if (!u.tryUnpackNil()) {
                            u.unpackLong(); // parent_block_hash
                        }
                        int tokens = u.unpackArrayHeader();
                        for (int t = 0; t < tokens; t++) {
                            u.unpackInt();
                        }
                        lastBlockSize = u.unpackInt();
                        expect(tokens == lastBlockSize, "token_ids " + tokens + " of block_size " + lastBlockSize);
                        expect(u.tryUnpackNil(), "lora_id nil");
                        String medium = u.unpackString();
                        mediaSeen.add(medium);
                        expect(u.tryUnpackNil(), "lora_name nil");
                        for (long h : hashes) {
                            expect(media.computeIfAbsent(h, k -> new HashSet<>()).add(medium) || !strict,
                                    "stored twice: " + h + " " + medium);
                        }
                        storedEvents++;
                    }
                    case "BlockRemoved" -> {
                        expect(fields == 3, "BlockRemoved fields " + fields);
                        List<Long> hashes = hashes(u);
                        String medium = u.unpackString();
                        for (long h : hashes) {
                            Set<String> m = media.get(h);
                            expect(m != null && m.remove(medium) || !strict, "removed but not stored: " + h + " " + medium);
                            if (m != null && m.isEmpty()) {
                                media.remove(h);
                            }
                        }
                        removedEvents++;
                    }
                    case "AllBlocksCleared" -> {
                        expect(fields == 1, "AllBlocksCleared fields " + fields);
                        media.clear();
                        clears++;
                    }
                    default -> throw new AssertionError("unknown tag " + tag);
                }
            }
            lastRank = u.unpackInt();
            expect(!u.hasNext(), "nothing after the batch");
        }
    }

    private static List<Long> hashes(MessageUnpacker u) throws IOException {
        int n = u.unpackArrayHeader();
        List<Long> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(u.unpackLong());
        }
        return out;
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** {@return media -> hashes, from the events} */
    synchronized Map<String, Set<Long>> byMedium() {
        check();
        Map<String, Set<Long>> out = new HashMap<>();
        media.forEach((h, ms) -> ms.forEach(m -> out.computeIfAbsent(m, k -> new HashSet<>()).add(h)));
        return out;
    }

    @Override
    public void close() {
        closing = true;
        try {
            receiver.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        context.close();
    }
}
