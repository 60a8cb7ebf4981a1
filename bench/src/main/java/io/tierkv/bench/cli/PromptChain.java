package io.tierkv.bench.cli;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.prefix.HashAlgorithm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The chained block hashes and identities of a prompt's full blocks, computed outside any cache
 * exactly as a cache with default {@code SequenceOptions} (empty salt, no extra keys) and unkeyed
 * SHA-256 block hashes computes them when it seals the same tokens ({@code PromptChainTest} checks
 * that): hash {@code i} chains on hash {@code i - 1} ({@link BlockHasher#hashBlock}); identity
 * {@code i} is the context fingerprint ({@link BlockHasher#hashContext}), hash {@code i - 1} and
 * the block's token ids ({@link BlockIdentity}). A connector uses them to look blocks up in a
 * shared store, and to name the blocks it stores there, before or without a cache holding them.
 *
 * <p>Not thread-safe; one per replaying thread. Reuses its arrays and identity memory between
 * prompts.
 */
final class PromptChain implements AutoCloseable {

    private final int blockTokens;
    private final BlockHasher hasher = new BlockHasher(HashAlgorithm.SHA256_128);
    private final long saltHi;
    private final long saltLo;
    private final long contextHi;
    private final long contextLo;
    private static final long[] NO_KEYS = new long[0];
    private final long identityBytes;
    private final Arena arena = Arena.ofShared(); // the store encodes and decodes on its I/O threads
    private long[] hi = new long[64];
    private long[] lo = new long[64];
    private MemorySegment identities;
    private MemorySegment[] identityViews = new MemorySegment[0];
    private int blocks;

    /**
     * Creates a chain for blocks of {@code blockTokens} tokens.
     *
     * @param blockTokens B, {@code >= 1}
     */
    PromptChain(int blockTokens) {
        this.blockTokens = blockTokens;
        long[] out = new long[2];
        hasher.hashSalt("", out);
        saltHi = out[0];
        saltLo = out[1];
        new BlockHasher(HashAlgorithm.SHA256_128).hashContext("", NO_KEYS, out);
        contextHi = out[0];
        contextLo = out[1];
        identityBytes = BlockIdentity.bytes(blockTokens);
        identities = arena.allocate(identityBytes * 64, 8);
    }

    /**
     * Computes the chain of the first {@code fullBlocks} blocks of {@code tokens}.
     *
     * @param tokens     the prompt's token ids
     * @param fullBlocks full blocks to hash, {@code fullBlocks * B <= tokens.length}
     */
    void compute(int[] tokens, int fullBlocks) {
        if (fullBlocks > hi.length) {
            int n = Math.max(fullBlocks, hi.length * 2);
            hi = new long[n];
            lo = new long[n];
            identities = arena.allocate(identityBytes * n, 8);
            identityViews = new MemorySegment[0];
        }
        if (identityViews.length < hi.length) {
            identityViews = new MemorySegment[hi.length];
            for (int i = 0; i < identityViews.length; i++) {
                identityViews[i] = identities.asSlice(i * identityBytes, identityBytes);
            }
        }
        MemorySegment prompt = MemorySegment.ofArray(tokens);
        long parentHi = 0;
        long parentLo = 0;
        for (int i = 0; i < fullBlocks; i++) {
            MemorySegment id = identityViews[i];
            BlockIdentity.writeKey(id, 0, contextHi, contextLo, parentHi, parentLo);
            MemorySegment.copy(tokens, i * blockTokens, id, ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES, blockTokens);
            hasher.hashBlock(saltHi, saltLo, parentHi, parentLo, NO_KEYS, prompt, (long) i * blockTokens,
                    blockTokens);
            parentHi = hasher.hi();
            parentLo = hasher.lo();
            hi[i] = parentHi;
            lo[i] = parentLo;
        }
        blocks = fullBlocks;
    }

    /** {@return full blocks of the last {@link #compute}} */
    int blocks() {
        return blocks;
    }

    /** {@return the high words of the hashes; entries {@code [0, blocks())} are the last prompt's} */
    long[] hashHi() {
        return hi;
    }

    /** {@return the low words of the hashes} */
    long[] hashLo() {
        return lo;
    }

    /** {@return block {@code i}'s identity: a view, valid until the next {@link #compute}} */
    MemorySegment identity(int i) {
        return identityViews[i];
    }

    /** {@return views of the identities, entries {@code [0, blocks())} the last prompt's} */
    MemorySegment[] identities() {
        return identityViews;
    }

    @Override
    public void close() {
        arena.close();
    }
}
