package io.tierkv.observe;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.tiers.events.KvEventBatch;
import io.tierkv.tiers.events.KvEventListener;
import io.tierkv.tiers.events.KvEventView;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Publishes KV event batches as vLLM's {@code ZmqEventPublisher} does: each batch one ZeroMQ
 * multipart message {@code (topic, 8-byte big-endian sequence number, msgpack payload)} on a PUB
 * socket ({@link KvEventEncoder} has the payload). Give it to
 * {@code KvBlockManagerBuilder.kvEvents(publisher)}; it runs on the manager's event thread, never
 * on the data path.
 *
 * <p>Endpoint, as vLLM: an endpoint with a wildcard ({@code tcp://*:5557}), {@code ::}, or an
 * {@code inproc://} endpoint is bound; any other ({@code tcp://127.0.0.1:5557}) is connected to,
 * so the consumer binds its SUB socket there. {@code ipc://} is refused: JeroMQ carries it over
 * loopback TCP, with no socket file, so a libzmq consumer (vLLM's, Dynamo's, llm-d's) could not
 * reach it.
 *
 * <p>Sequence numbers: this publisher's own, starting at 0, advancing by 1 per batch plus the
 * events the manager dropped before it ({@link KvEventBatch#droppedBefore()}), so a consumer sees
 * every loss as a gap and can resynchronise (vLLM's consumers request a replay; TierKV keeps no
 * replay buffer, so a consumer that sees a gap rebuilds from the next {@code AllBlocksCleared} or
 * restarts). One publisher may serve managers one after another (a restart): its sequence goes on.
 *
 * <p>Subscribers: a PUB socket drops messages until a subscriber's subscription arrives. This
 * publisher is an XPUB socket (wire-compatible with PUB) and waits, before its first batch, up to
 * {@code awaitSubscriberMillis} for a subscription, so a consumer started first misses nothing.
 *
 * <p>Handshake: a connecting publisher gives a connection {@link #CONNECT_HANDSHAKE_MILLIS} to
 * complete its ZMTP handshake, then drops it and connects again. JeroMQ 0.6.0 leaves about 1-6 %
 * of fresh connections connected over TCP with no handshake (zeromq/jeromq#1022, open as of
 * 2026-12: a cancelled selection key is reused for the new channel, so its greeting is never
 * sent); until the handshake timer fires, no subscription arrives and every batch is dropped, and
 * the timer's default is 30 s. Here such a connection is retried within half a second, inside the
 * command line's one-second wait for a first subscriber. A bound publisher accepts its
 * connections, which that bug does not affect, and keeps the default.
 *
 * <p>Thread-safe: {@link #onBatch} and {@link #close} are synchronized (the socket moves between
 * the event threads of successive managers under that monitor).
 */
public final class ZmqKvEventPublisher implements KvEventListener, AutoCloseable {

    /**
     * How long a connection this publisher makes may take to complete its ZMTP handshake before it
     * is dropped and made again: half the command line's wait for a first subscriber
     * ({@link Observation#AWAIT_SUBSCRIBER_MILLIS}), so a stuck connection is retried within it.
     */
    public static final int CONNECT_HANDSHAKE_MILLIS = 500;

    @GuardedBy("this") private final ZContext context;
    @GuardedBy("this") private final ZMQ.Socket socket;
    private final byte[] topic;
    @GuardedBy("this") private final KvEventEncoder encoder;
    private final long awaitSubscriberMillis;
    private final String endpoint;
    /** Where the socket was bound, the port resolved; null when it connected. */
    private final String boundEndpoint;
    /** The 8-byte big-endian sequence frame, reused (sent through the copying send). */
    @GuardedBy("this") private final ByteBuffer sequenceFrame = ByteBuffer.allocate(Long.BYTES);
    @GuardedBy("this") private boolean subscribed;
    @GuardedBy("this") private long nextSequence;
    @GuardedBy("this") private long sentBatches;
    @GuardedBy("this") private boolean closed;

    /**
     * Opens the socket.
     *
     * @param endpoint              a ZeroMQ endpoint, e.g. {@code tcp://*:5557} (bound) or
     *                              {@code tcp://127.0.0.1:5557} (connected)
     * @param topic                 the first frame of every message ({@code ""} as vLLM's default)
     * @param dataParallelRank      the batches' {@code data_parallel_rank}, >= 0
     * @param awaitSubscriberMillis how long the first batch waits for a subscriber, >= 0
     * @throws NullPointerException     if endpoint or topic is null
     * @throws IllegalArgumentException if a number is out of range (naming it, its value and the
     *                                  bound), or the endpoint is malformed, cannot be bound, or
     *                                  connects to port 0 (naming the endpoint)
     */
    public ZmqKvEventPublisher(String endpoint, String topic, int dataParallelRank, long awaitSubscriberMillis) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(topic, "topic");
        if (awaitSubscriberMillis < 0) {
            throw new IllegalArgumentException("awaitSubscriberMillis: " + awaitSubscriberMillis + " (expected >= 0)");
        }
        if (endpoint.startsWith("ipc://")) { // JeroMQ's ipc is TCP on loopback: no socket file for libzmq to open
            throw new IllegalArgumentException("kv-events endpoint: " + endpoint + " (expected tcp:// or inproc://: "
                    + "JeroMQ carries ipc:// over loopback TCP, which a libzmq consumer such as vLLM's cannot reach)");
        }
        if (!binds(endpoint) && endpoint.endsWith(":0")) { // JeroMQ would "connect" to port 0 and deliver nothing
            throw new IllegalArgumentException("kv-events endpoint: " + endpoint + " (expected a port to connect to: "
                    + "port 0 lets the system choose one only when binding, as tcp://*:0 or tcp://127.0.0.1:* do)");
        }
        this.encoder = new KvEventEncoder(dataParallelRank);
        this.endpoint = endpoint;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.awaitSubscriberMillis = awaitSubscriberMillis;
        this.context = new ZContext(1);
        this.socket = context.createSocket(SocketType.XPUB);
        socket.setLinger(1000);
        socket.setSndHWM(100_000);
        String bound = null;
        try {
            if (binds(endpoint)) {
                socket.bind(endpoint);
                bound = socket.getLastEndpoint();
            } else {
                socket.setHandshakeIvl(CONNECT_HANDSHAKE_MILLIS);
                socket.connect(endpoint);
            }
        } catch (RuntimeException e) {
            context.close();
            throw new IllegalArgumentException("kv-events endpoint: " + endpoint + " (expected a ZeroMQ endpoint such as "
                    + "tcp://*:5557 to bind or tcp://127.0.0.1:5557 to connect): " + reason(e), e);
        }
        this.boundEndpoint = bound;
    }

    /** What JeroMQ's exception means, in words ({@code address already in use}, not {@code Errno 48}). */
    private static String reason(RuntimeException e) {
        if (e instanceof org.zeromq.ZMQException z) {
            return zmq.ZError.toString(z.getErrorCode()) + " (errno " + z.getErrorCode() + ")";
        }
        return e.getMessage();
    }

    /**
     * {@return where the socket was bound, its port resolved ({@code tcp://0.0.0.0:41235} for
     * {@code tcp://*:0}), or null for an endpoint it connected to}
     */
    public String boundEndpoint() {
        return boundEndpoint;
    }

    /**
     * Whether vLLM's rule binds this endpoint rather than connecting to it.
     *
     * @param endpoint an endpoint
     * @return true for a wildcard, {@code ::}, {@code ipc://} or {@code inproc://}
     */
    static boolean binds(String endpoint) {
        return endpoint.contains("*") || endpoint.contains("::") || endpoint.startsWith("ipc://")
                || endpoint.startsWith("inproc://");
    }

    @Override
    public void onBatch(KvEventBatch batch) {
        onEvents(batch.sequence(), batch.timestampSeconds(), batch.droppedBefore(), KvEventView.of(batch.events()));
    }

    /** Encodes the view in place (no object per event) and sends it; the manager calls this. */
    @Override
    public synchronized void onEvents(long sequence, double timestampSeconds, long droppedBefore,
            KvEventView events) {
        if (closed) {
            return;
        }
        if (!subscribed) {
            awaitSubscriber();
        }
        long ours = nextSequence + droppedBefore;
        nextSequence = ours + 1;
        int length = encoder.encodeInPlace(timestampSeconds, events);
        socket.sendMore(topic);
        sequenceFrame.putLong(0, ours);
        // send(array, offset, length, flags) copies the bytes (sendMore(array) would queue the array itself).
        socket.send(sequenceFrame.array(), 0, Long.BYTES, ZMQ.SNDMORE);
        socket.send(encoder.buffer(), 0, length, 0);
        sentBatches++;
    }

    /** Reads subscription frames for up to {@link #awaitSubscriberMillis} (once; XPUB). */
    @GuardedBy("this")
    private void awaitSubscriber() {
        long deadline = System.nanoTime() + awaitSubscriberMillis * 1_000_000L;
        do {
            long leftMillis = Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
            socket.setReceiveTimeOut((int) Math.min(Integer.MAX_VALUE, Math.max(1, leftMillis)));
            byte[] frame = socket.recv();
            if (frame != null && frame.length > 0 && frame[0] == 1) {
                break;
            }
        } while (System.nanoTime() < deadline);
        subscribed = true; // waited once: later batches go out at once, subscriber or not
    }

    /** {@return batches sent so far} */
    public synchronized long sentBatches() {
        return sentBatches;
    }

    /** {@return the endpoint as given} */
    public String endpoint() {
        return endpoint;
    }

    /** Closes the socket (pending messages get up to 1 s to leave); idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            context.close();
        }
    }
}
