package io.tierkv.remote;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The store's Lettuce codec: encodes keys and block values straight into Netty's command buffer
 * ({@link ToByteBufEncoder} with exact sizes, so Lettuce writes no temporary buffer), the payload
 * copied once from the caller's {@code MemorySegment}. Replies are never decoded through it: every
 * command the store sends has its own output ({@link BlockReadOutput}, {@link EvictedOutput},
 * Lettuce's integer and status outputs).
 *
 * <p>Key of a block: {@code tierkv:v1:<namespace>:<layout fingerprint, 16 hex>:<hash, 32 hex>},
 * no hash tag, so blocks spread over cluster slots. Stateless after construction; thread-safe.
 */
final class RemoteCodec implements RedisCodec<RemoteKey, RemoteValue>, ToByteBufEncoder<RemoteKey, RemoteValue> {

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    /** Hex digits of a 128-bit hash. */
    static final int HASH_HEX_DIGITS = 32;

    private final byte[] prefix;

    /**
     * A codec for one namespace and layout.
     *
     * @param namespace   the validated namespace
     * @param fingerprint the layout fingerprint
     */
    RemoteCodec(String namespace, long fingerprint) {
        this.prefix = blockKeyPrefix(namespace, fingerprint).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * {@return the text before a block's hash in its key: {@code tierkv:v1:<namespace>:<fp hex>:}}
     *
     * @param namespace   the namespace
     * @param fingerprint the layout fingerprint
     */
    static String blockKeyPrefix(String namespace, long fingerprint) {
        return "tierkv:v1:" + namespace + ":" + String.format("%016x", fingerprint) + ":";
    }

    /**
     * {@return the 32 lower-case hex digits of a hash, high word first}
     *
     * @param hi high 64 bits
     * @param lo low 64 bits
     */
    static String hashHex(long hi, long lo) {
        return String.format("%016x%016x", hi, lo);
    }

    private static void writeHex(ByteBuf target, long v) {
        for (int shift = 60; shift >= 0; shift -= 4) {
            target.writeByte(HEX[(int) (v >>> shift) & 0xf]);
        }
    }

    private static void writeHex(ByteBuffer target, long v) {
        for (int shift = 60; shift >= 0; shift -= 4) {
            target.put(HEX[(int) (v >>> shift) & 0xf]);
        }
    }

    @Override
    public void encodeKey(RemoteKey key, ByteBuf target) {
        switch (key) {
            case RemoteKey.Block b -> {
                target.writeBytes(prefix);
                writeHex(target, b.hi());
                writeHex(target, b.lo());
            }
            case RemoteKey.Named n -> target.writeBytes(n.name());
        }
    }

    @Override
    public void encodeValue(RemoteValue value, ByteBuf target) {
        switch (value) {
            case BlockWrite w -> w.encode(target);
            case RemoteValue.Member m -> {
                writeHex(target, m.hi());
                writeHex(target, m.lo());
            }
        }
    }

    @Override
    public int estimateSize(Object keyOrValue) {
        return switch (keyOrValue) {
            case RemoteKey.Block b -> prefix.length + HASH_HEX_DIGITS;
            case RemoteKey.Named n -> n.name().length;
            case BlockWrite w -> w.valueBytes();
            case RemoteValue.Member m -> HASH_HEX_DIGITS;
            default -> throw new IllegalArgumentException("keyOrValue: " + keyOrValue
                    + " (expected a RemoteKey or RemoteValue)");
        };
    }

    @Override
    public boolean isEstimateExact() {
        return true;
    }

    /**
     * {@inheritDoc} Used by Lettuce's cluster routing (the first key's slot) and its logging; a
     * small heap buffer.
     */
    @Override
    public ByteBuffer encodeKey(RemoteKey key) {
        ByteBuffer out = ByteBuffer.allocate(estimateSize(key));
        switch (key) {
            case RemoteKey.Block b -> {
                out.put(prefix);
                writeHex(out, b.hi());
                writeHex(out, b.lo());
            }
            case RemoteKey.Named n -> out.put(n.name());
        }
        return out.flip();
    }

    /**
     * {@inheritDoc} Only for Lettuce's debug logging of arguments: a block value is described by
     * its length, never read.
     */
    @Override
    public ByteBuffer encodeValue(RemoteValue value) {
        String text = switch (value) {
            case BlockWrite w -> "<block value, " + w.valueBytes() + " bytes>";
            case RemoteValue.Member m -> hashHex(m.hi(), m.lo());
        };
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Not used: the store's commands decode through their own outputs.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public RemoteKey decodeKey(ByteBuffer bytes) {
        throw new UnsupportedOperationException("RemoteCodec.decodeKey: replies decode through their own outputs");
    }

    /**
     * Not used: the store's commands decode through their own outputs.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public RemoteValue decodeValue(ByteBuffer bytes) {
        throw new UnsupportedOperationException("RemoteCodec.decodeValue: replies decode through their own outputs");
    }

    /**
     * Parses 32 hex digits (a {@link RemoteValue.Member} as the server returns it) into a block key.
     *
     * @param bytes the digits, consumed
     * @return the key, or null if {@code bytes} is not 32 hex digits
     */
    static RemoteKey.Block parseMember(ByteBuffer bytes) {
        if (bytes == null || bytes.remaining() != HASH_HEX_DIGITS) {
            return null;
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < HASH_HEX_DIGITS; i++) {
            int d = Character.digit(bytes.get(), 16);
            if (d < 0) {
                return null;
            }
            if (i < 16) {
                hi = (hi << 4) | d;
            } else {
                lo = (lo << 4) | d;
            }
        }
        return new RemoteKey.Block(hi, lo);
    }
}
