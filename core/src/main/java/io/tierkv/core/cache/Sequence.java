package io.tierkv.core.cache;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.error.BudgetExceededException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * One sequence (one request or session) of a {@link PagedKvCache}: its block table (logical
 * block index to block id), its token count, and its position in the block hash chain.
 *
 * <p>Positions are appended one token at a time ({@link #appendToken}); each position's K and V
 * are then written per layer ({@link #write}). A block seals when all B positions of all L layers
 * are written and every earlier block has sealed: it then gets its chained hash and becomes
 * shareable. Sealed blocks are immutable. A block shared with a fork is copied before the first
 * divergent write to it (copy-on-write). Reads go through leases, which pin blocks on the top tier.
 *
 * <p>Whole blocks: a runtime that holds a block's image already (an offloading connector, a KV
 * store in front of a prefix cache) appends it with {@link #appendBlock} (one copy, sealed at once)
 * and copies a sealed block out with {@link #readBlock} from whichever tier holds it, unpromoted.
 *
 * <p>Thread-safety: one thread at a time per sequence (the runtime's rule); different sequences
 * may be used from different threads concurrently.
 */
public final class Sequence implements AutoCloseable {

    private final PagedKvCache cache;
    // Not @GuardedBy: the state below is the sequence's own thread's, read by it without the lock and
    // written under it but for an append within an unshared OPEN tail (PagedKvCache, Concurrency).
    /** The cache's parts this sequence touches on every token, one load away rather than two. */
    private final BlockStates blocks;
    private final WrittenPositions written;
    private final IdentityTable identities;
    final SequenceOptions options;
    final long saltHi;
    final long saltLo;
    final long[] extraKeys;
    /** Context fingerprint of the salt and extra keys ({@link io.tierkv.core.prefix.BlockIdentity}). */
    final long contextHi;
    final long contextLo;
    long parentHi;
    long parentLo;
    final BlockTable table;
    private final TailTokens tail;
    private int length;
    private int lengthAtClose;
    private boolean closed;

    Sequence(PagedKvCache cache, SequenceOptions options, long saltHi, long saltLo, long contextHi, long contextLo) {
        this.cache = cache;
        this.blocks = cache.blocks;
        this.written = cache.written;
        this.identities = cache.identities;
        this.options = options;
        this.saltHi = saltHi;
        this.saltLo = saltLo;
        this.contextHi = contextHi;
        this.contextLo = contextLo;
        this.extraKeys = options.extraKeys();
        this.table = new BlockTable(cache.blocks, cache.options.recentDeviceBlocks());
        this.tail = new TailTokens(cache.blockTokens);
    }

    /**
     * Matches the longest run of full blocks of {@code promptTokens} already cached (any tier)
     * under this sequence's salt and extra keys, and takes them into this (empty) sequence.
     * Equivalent to {@code matchPrefix(promptTokens, promptTokens.length)}.
     *
     * @param promptTokens the prompt's token ids
     * @return tokens now present: a multiple of B, at most the prompt length
     * @throws NullPointerException  if promptTokens is null
     * @throws IllegalStateException if the sequence is not empty or is closed
     */
    public int matchPrefix(int[] promptTokens) {
        Objects.requireNonNull(promptTokens, "promptTokens");
        return matchPrefix(promptTokens, promptTokens.length);
    }

    /**
     * Matches as {@link #matchPrefix(int[])}, taking at most {@code maxTokens} tokens. A runtime
     * that must compute logits for the last prompt token passes {@code promptTokens.length - 1}.
     * Each candidate block is found by its chained hash and then its stored identity (context
     * fingerprint of salt and extra keys, parent hash, token ids) is compared: a hash alone never
     * proves identity. A block a move holds with no copy below (a promotion about to commit) is
     * waited for with the lock released, at most {@code promotionTimeoutNanos}; a miss after that.
     *
     * <p>With a remote store below, a local miss releases the lock, fetches the rest of the chain
     * from the store (each call bounded by its timeout; no other thread waits) and continues.
     *
     * <p>The match stops at this sequence's {@link SequenceOptions#budgetBytes() budgetBytes}: it
     * takes at most {@code budgetBytes / bytesPerBlock} blocks and returns the tokens taken, so the
     * runtime computes the rest of the prompt as for a shorter match (appending it then fails with
     * {@link BudgetExceededException} as any append over the budget does). Per-tier budgets
     * ({@link SequenceOptions#budgets()}) do not limit a match: matched blocks are not new blocks.
     * It stops the same way before a block holding 65,535 references, the most one block holds.
     *
     * @param promptTokens the prompt's token ids
     * @param maxTokens    most tokens to take, 0..promptTokens.length
     * @return tokens now present: a multiple of B, at most maxTokens and at most
     *         {@code budgetBytes / bytesPerBlock * B}
     * @throws NullPointerException     if promptTokens is null
     * @throws IllegalStateException    if the sequence is not empty or closed, or a wait for a move is interrupted
     * @throws IllegalArgumentException if maxTokens is out of range
     */
    public int matchPrefix(int[] promptTokens, int maxTokens) {
        Objects.requireNonNull(promptTokens, "promptTokens");
        if (maxTokens < 0 || maxTokens > promptTokens.length) {
            throw new IllegalArgumentException("maxTokens: " + maxTokens + " (expected 0 <= maxTokens <= "
                    + promptTokens.length + ")");
        }
        int full;
        cache.lock.lock();
        try {
            checkOpen();
            if (length != 0) {
                throw new IllegalStateException("matchPrefix on a sequence holding " + length + " tokens (expected 0)");
            }
            full = (int) Math.min(maxTokens / cache.blockTokens, options.budgetBytes() / cache.blockBytes);
            cache.prefix.match(this, promptTokens, 0, full);
            if (length == full * cache.blockTokens || cache.fetchAhead == null) {
                return length;
            }
        } finally {
            cache.lock.unlock();
        }
        cache.fetchAhead.matchRest(this, promptTokens, length / cache.blockTokens, full); // a store below, unlocked
        return length;
    }

    /** Takes a block a prefix match found (its reference taken) as this sequence's next, sealed block. Lock held. */
    @GuardedBy("cache.lock")
    void takeMatched(int id, long hi, long lo) {
        table.push(id);
        parentHi = hi;
        parentLo = lo;
        length += cache.blockTokens;
        table.onSealed(cache);
    }

    /**
     * Appends one token: assigns it the next position, taking a new block at a block boundary, or
     * a private copy of a shared unsealed tail (copy-on-write).
     *
     * @param tokenId the token id
     * @return the token's position
     * @throws io.tierkv.core.error.CapacityExhaustedException if no block can be had in time
     * @throws BudgetExceededException if a new block would exceed this sequence's budget, or its
     *                                 per-cache device share cannot be made room for by demoting
     *                                 its own older blocks (see {@link SequenceOptions#budgets()};
     *                                 nothing stored is lost)
     * @throws IllegalStateException   if closed
     */
    public int appendToken(int tokenId) {
        int offset = length % cache.blockTokens;
        if (offset != 0 && !closed && blocks.refs[table.id(table.count() - 1)] <= 1) {
            // Mid-block the tail is OPEN and, unshared, only this thread reaches it (PagedKvCache,
            // Concurrency); refs above 1 (a fork, or this thread's own lease) locks for privateTail.
            tail.keep(offset, tokenId);
            return length++;
        }
        cache.lock.lock();
        try {
            checkOpen();
            tail.flush(identities, table);
            int id = offset == 0 ? cache.admission.newBlockFor(this) : privateTail(table.count() - 1);
            identities.setToken(id, offset, tokenId);
            return length++;
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Appends one whole block: the B token ids {@code tokenIds[from .. from + B)} at the next B
     * positions, and the block's K and V for every layer copied in one piece from {@code block},
     * which holds the block image in the layout's order {@code [layer][K|V][token][head][dim]}
     * (see {@link KvLayout#offsetOf}). The block is then complete: it seals (hashed, indexed,
     * shareable) at once if every earlier block of this sequence has sealed, else with the last of
     * them, exactly as if each position had been appended with {@link #appendToken} and written
     * with {@link #write}. If the index already holds a block with the same hash, the index keeps
     * that one; this block then serves only its own sequence and is freed when the sequence lets
     * go of it, as for a block written token by token.
     *
     * @param tokenIds the token ids; B of them are read from {@code from}
     * @param from     index of the block's first token id, {@code 0 <= from <= tokenIds.length - B}
     * @param block    at least {@code bytesPerBlock} bytes of block image; read, not kept
     * @return the position of the block's first token (the sequence length before the call)
     * @throws NullPointerException      if tokenIds or block is null
     * @throws IndexOutOfBoundsException if {@code from} is out of range
     * @throws IllegalArgumentException  if {@code block} is shorter than {@code bytesPerBlock}
     * @throws IllegalStateException     if the sequence length is not a multiple of B (a partly
     *                                   filled tail block), if the sequence is closed, if the top tier is not
     *                                   host-visible (a real GPU), or if {@code block} cannot be read (its
     *                                   arena closed); nothing is appended then
     * @throws io.tierkv.core.error.CapacityExhaustedException if no block can be had in time
     * @throws BudgetExceededException   if a new block would exceed this sequence's budget, or its
     *                                   per-cache device share cannot be made room for, exactly as
     *                                   for {@link #appendToken} (nothing stored is lost)
     */
    public int appendBlock(int[] tokenIds, int from, MemorySegment block) {
        Objects.requireNonNull(tokenIds, "tokenIds");
        Checks.atLeast("block.byteSize", Objects.requireNonNull(block, "block").byteSize(), cache.blockBytes, "bytesPerBlock");
        int b = cache.blockTokens;
        if (from < 0 || from > tokenIds.length - b) {
            throw new IndexOutOfBoundsException("from: " + from + " (expected 0 <= from <= tokenIds.length - blockSizeTokens = "
                    + tokenIds.length + " - " + b + ")");
        }
        int id;
        int position;
        cache.lock.lock();
        try {
            checkOpen();
            tail.flush(identities, table);
            if (length % b != 0) {
                throw new IllegalStateException("appendBlock at length " + length + " (expected a multiple of blockSizeTokens "
                        + b + "; the tail block is partly filled)");
            }
            id = cache.admission.newBlockFor(this);
            identities.setTokens(id, tokenIds, from);
            position = length;
            length += b;
        } finally {
            cache.lock.unlock();
        }
        try {
            MemorySegment.copy(block, 0, cache.slotMemory(blocks.slot[id]), 0, cache.blockBytes); // unshared OPEN block: no lock
        } catch (RuntimeException e) {
            cache.lock.lock();
            try {
                table.pop();
                length -= b;
                cache.unref(id); // OPEN and unreferenced: freed
            } finally {
                cache.lock.unlock();
            }
            throw e;
        }
        written.markAll(id);
        cache.lock.lock();
        try {
            sealReady();
        } finally {
            cache.lock.unlock();
        }
        return position;
    }

    /**
     * Writes one position's K and V for one layer.
     *
     * @param layer    layer in [0, L)
     * @param position an appended position whose block is not sealed
     * @param k        at least {@code tokenVectorBytes} bytes of keys, layout {@code [head][dim]};
     *                 the first {@code tokenVectorBytes} are read
     * @param v        at least {@code tokenVectorBytes} bytes of values, same layout
     * @throws NullPointerException      if k or v is null
     * @throws IndexOutOfBoundsException if layer or position is out of range
     * @throws IllegalArgumentException  if k or v is shorter than {@code tokenVectorBytes}; both are
     *                                   checked before any byte is copied
     * @throws IllegalStateException     if the position's block is sealed, or the sequence closed
     */
    public void write(int layer, int position, MemorySegment k, MemorySegment v) {
        KvLayout l = cache.layout;
        int n = l.tokenVectorBytes();
        Checks.atLeast("k.byteSize", Objects.requireNonNull(k, "k").byteSize(), n, "tokenVectorBytes");
        Checks.atLeast("v.byteSize", Objects.requireNonNull(v, "v").byteSize(), n, "tokenVectorBytes");
        int id = writableBlock(layer, position);
        int offset = position % cache.blockTokens;
        MemorySegment dst = cache.slotMemory(blocks.slot[id]);
        MemorySegment.copy(k, 0, dst, l.offsetOf(layer, KvLayout.K, offset), n);
        MemorySegment.copy(v, 0, dst, l.offsetOf(layer, KvLayout.V, offset), n);
        afterWrite(id, layer, offset);
    }

    /**
     * Writes one position's K and V for one layer from float arrays (layout dtype F32 only).
     *
     * @param layer    layer in [0, L)
     * @param position an appended position whose block is not sealed
     * @param k        at least H x D keys, layout {@code [head][dim]}; the first H x D are read
     * @param v        at least H x D values, same layout
     * @throws NullPointerException      if k or v is null
     * @throws IndexOutOfBoundsException if layer or position is out of range
     * @throws IllegalArgumentException  if k or v holds fewer than H x D elements; both are checked
     *                                   before any element is copied
     * @throws IllegalStateException     as {@link #write(int, int, MemorySegment, MemorySegment)}, or
     *                                   if the layout's dtype is not F32
     */
    public void write(int layer, int position, float[] k, float[] v) {
        KvLayout l = cache.layout;
        if (l.dtype() != DType.F32) {
            throw new IllegalStateException("float[] write needs dtype F32, layout has " + l.dtype());
        }
        int n = l.kvHeads() * l.headDim();
        Checks.atLeast("k.length", Objects.requireNonNull(k, "k").length, n, "kvHeads x headDim");
        Checks.atLeast("v.length", Objects.requireNonNull(v, "v").length, n, "kvHeads x headDim");
        int id = writableBlock(layer, position);
        int offset = position % cache.blockTokens;
        MemorySegment dst = cache.slotMemory(blocks.slot[id]);
        MemorySegment.copy(k, 0, dst, ValueLayout.JAVA_FLOAT, l.offsetOf(layer, KvLayout.K, offset), n);
        MemorySegment.copy(v, 0, dst, ValueLayout.JAVA_FLOAT, l.offsetOf(layer, KvLayout.V, offset), n);
        afterWrite(id, layer, offset);
    }

    private int writableBlock(int layer, int position) {
        checkClosed();
        checkPosition(layer, position);
        int bi = position / cache.blockTokens;
        int id = table.id(bi);
        if (blocks.state(id) != BlockStates.OPEN) {
            throw new IllegalStateException("position " + position + " is in sealed block " + bi
                    + " (sealed blocks are immutable)");
        }
        // Shared with a fork? Unlocked, refs alone (holders and leases; above 1 only by this thread's
        // own fork or lease) says whether to look; refs - leases, exact only under the lock, decides.
        if (blocks.refs[id] > 1) {
            cache.lock.lock();
            try {
                checkOpen(); // a close that overtook the unlocked check: the tail may be another's now
                tail.flush(identities, table);
                id = privateTail(bi);
            } finally {
                cache.lock.unlock();
            }
        }
        return id;
    }

    private void afterWrite(int id, int layer, int offset) {
        if (written.mark(id, layer, offset)) {
            cache.lock.lock();
            try {
                sealReady();
            } finally {
                cache.lock.unlock();
            }
        }
    }

    /** Returns the block at a table index, replaced by a private copy first if it is shared. Lock held. */
    @GuardedBy("cache.lock")
    private int privateTail(int bi) {
        int id = table.id(bi);
        if (blocks.refs[id] - blocks.leases[id] > 1) {
            id = cache.admission.copyOnWrite(id, cache.admissionDeadline());
            table.set(bi, id);
        }
        return id;
    }

    /** Seals, in order, every leading block whose positions are all written; none once closed. Lock held. */
    @GuardedBy("cache.lock")
    private void sealReady() {
        int b = cache.blockTokens;
        while (!closed && table.sealed() < table.count() && (long) (table.sealed() + 1) * b <= length) {
            int id = table.id(table.sealed());
            if (blocks.state(id) == BlockStates.OPEN) {
                if (!written.isComplete(id)) {
                    return;
                }
                tail.flush(identities, table); // the tail's ids into its row before a seal hashes one
                cache.prefix.seal(id, this);
            }
            parentHi = blocks.hashHi[id];
            parentLo = blocks.hashLo[id];
            table.onSealed(cache);
        }
    }

    /**
     * Forks: a new sequence sharing every block of this one (reference counts rise), with the same
     * options (salt, keys, priority, budgets) and length; the shared blocks count against both
     * sequences' budgets. The first divergent write to a shared unsealed block copies it.
     *
     * @return the child sequence
     * @throws IllegalStateException if closed or a block holds 65,535 references (nothing changes)
     */
    public Sequence fork() {
        cache.lock.lock();
        try {
            checkOpen();
            table.checkForkable();
            tail.flush(identities, table);
            Sequence child = cache.openSequence(options);
            child.table.forkFrom(table, cache);
            child.length = length;
            child.parentHi = parentHi;
            child.parentLo = parentLo;
            return child;
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Leases the blocks covering tokens {@code [fromToken, toToken)}: each is promoted to the top
     * tier if needed and pinned there until the lease closes.
     *
     * @param fromToken first token, {@code 0 <= fromToken < toToken}
     * @param toToken   end token (exclusive), {@code <= length}
     * @return the lease; close it
     * @throws IndexOutOfBoundsException if the range is invalid
     * @throws IllegalStateException     if the sequence is closed or a block holds 65,535 references
     * @throws io.tierkv.core.error.CapacityExhaustedException if the top tier cannot hold them in time
     * @throws io.tierkv.core.error.CorruptBlockException      if a block was lost below
     */
    public BlockLease lease(int fromToken, int toToken) {
        checkClosed();
        if (fromToken < 0 || toToken > length || fromToken >= toToken) {
            throw new IndexOutOfBoundsException("token range [" + fromToken + ", " + toToken
                    + ") (expected 0 <= from < to <= length " + length + ")");
        }
        int first = fromToken / cache.blockTokens;
        cache.lock.lock();
        try {
            checkOpen();
            int[] ids = table.ids(first, (toToken - 1) / cache.blockTokens + 1);
            return new BlockLease(cache, first, ids, cache.leases.leaseAll(ids, cache.admissionDeadline(), this));
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Copies one position's K and V for one layer out (leasing its block for the copy).
     *
     * @param layer    layer in [0, L)
     * @param position position in [0, length)
     * @param kOut     receives tokenVectorBytes of keys, layout {@code [head][dim]}; writable
     * @param vOut     receives tokenVectorBytes of values, same layout; writable
     * @throws NullPointerException      if kOut or vOut is null
     * @throws IndexOutOfBoundsException if layer or position is out of range
     * @throws IllegalArgumentException  if kOut or vOut is shorter than {@code tokenVectorBytes}
     * @throws IllegalStateException     if the sequence is closed (its ids may hold another sequence's bytes)
     */
    public void read(int layer, int position, MemorySegment kOut, MemorySegment vOut) {
        checkClosed();
        checkPosition(layer, position);
        int n = cache.layout.tokenVectorBytes();
        Checks.atLeast("kOut.byteSize", Objects.requireNonNull(kOut, "kOut").byteSize(), n, "tokenVectorBytes");
        Checks.atLeast("vOut.byteSize", Objects.requireNonNull(vOut, "vOut").byteSize(), n, "tokenVectorBytes");
        int id = table.id(position / cache.blockTokens);
        MemorySegment block = cache.acquireLease(id);
        try {
            checkClosed(); // closed by another thread after the id was read: it may hold another sequence's block
            KvLayout l = cache.layout;
            int offset = position % cache.blockTokens;
            MemorySegment.copy(block, l.offsetOf(layer, KvLayout.K, offset), kOut, 0, l.tokenVectorBytes());
            MemorySegment.copy(block, l.offsetOf(layer, KvLayout.V, offset), vOut, 0, l.tokenVectorBytes());
        } finally {
            cache.releaseLease(id);
        }
    }

    /** {@return the options this sequence was opened with} */
    public SequenceOptions options() {
        return options;
    }

    /**
     * Copies one sealed block's bytes (the whole block image, layout order) into {@code out},
     * from the tier that holds it now: the device, the host, or the disk (whose record's CRC32C
     * is verified before any byte is copied). The block is not promoted and stays where it was; the
     * read counts as a hit on that tier ({@code deviceReads} in {@link CacheStats}, the host and
     * disk reads in the tier manager's stats) and tells the eviction policies of the access. While
     * the copy runs the block is held in place (in transit): nobody moves or frees it.
     *
     * @param blockIndex a sealed block of this sequence, {@code 0 <= blockIndex < sealedBlocks()}
     * @param out        receives {@code bytesPerBlock} bytes from offset 0; writable
     * @throws NullPointerException      if out is null
     * @throws IndexOutOfBoundsException if blockIndex is outside {@code [0, blockCount())}
     * @throws IllegalArgumentException  if out is read-only or shorter than {@code bytesPerBlock}
     * @throws IllegalStateException     if the block is not sealed yet, the sequence is closed, or
     *                                   the device tier is not host-visible (a real GPU)
     * @throws io.tierkv.core.error.CorruptBlockException if the block's bytes are lost below (a
     *                                   disk record missing or failing its checksum: a counted miss);
     *                                   {@code out} may then hold partial bytes and must not be used
     * @throws io.tierkv.core.error.TransferTimeoutException if another move of the block does not end in time
     */
    public void readBlock(int blockIndex, MemorySegment out) {
        Objects.requireNonNull(out, "out");
        Checks.index("blockIndex", blockIndex, table.count(), "blockCount ");
        Checks.writable("out", out, cache.blockBytes, "bytesPerBlock");
        checkClosed();
        if (blockIndex >= table.sealed()) {
            throw new IllegalStateException("block " + blockIndex + " is not sealed (sealedBlocks " + table.sealed()
                    + "; write every position of it and of the blocks before it)");
        }
        cache.moves.read.run(table.id(blockIndex), out);
        checkClosed(); // as in read: out may then hold another sequence's block, and the call throws
    }

    /** {@return the cache's block layout} */
    public KvLayout layout() {
        return cache.layout;
    }

    /** {@return tokens appended (or matched) so far; after close, the length at close} */
    public int length() {
        return closed ? lengthAtClose : length;
    }

    /** {@return blocks in the table; after close, the count at close (the blocks are no longer held)} */
    public int blockCount() {
        return table.count();
    }

    /** {@return leading blocks that are sealed; after close, the count at close} */
    public int sealedBlocks() {
        return table.sealed();
    }

    /**
     * Returns the block id at a logical block index.
     *
     * @param blockIndex logical block index in [0, blockCount)
     * @return the block id at that index
     * @throws IndexOutOfBoundsException if out of range
     * @throws IllegalStateException     if the sequence is closed (the id may be another sequence's by then)
     */
    public int blockId(int blockIndex) {
        checkClosed();
        Checks.index("blockIndex", blockIndex, table.count(), "");
        return table.id(blockIndex);
    }

    /**
     * Returns the token id stored at a position.
     *
     * @param position a position in [0, length)
     * @return the token id stored at that position
     * @throws IndexOutOfBoundsException if out of range
     * @throws IllegalStateException     if the sequence is closed (its blocks may hold another's tokens by then)
     */
    public int tokenAt(int position) {
        checkClosed();
        Checks.index("position", position, length, "");
        int b = cache.blockTokens;
        int stored = identities.token(table.id(position / b), position % b);
        return position / b == table.count() - 1 ? tail.token(position % b, stored) : stored;
    }

    /**
     * {@return whether this sequence was opened by {@code owner}, whose block ids it holds; any thread}
     *
     * @param owner a cache
     */
    public boolean isOf(PagedKvCache owner) {
        return cache == owner;
    }

    /** {@return whether {@link #close()} ran} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Closes the sequence: its table references drop; sealed, hashed blocks stay cached until
     * evicted; the rest are freed. Idempotent.
     */
    @Override
    public void close() {
        cache.lock.lock();
        try {
            if (closed) {
                return;
            }
            table.protectRecent(-1);
            lengthAtClose = length;
            closed = true;
            cache.closed(this);
            for (int i = 0; i < table.count(); i++) {
                cache.unref(table.id(i));
            }
            cache.signalChange();
        } finally {
            cache.lock.unlock();
        }
    }

    private void checkPosition(int layer, int position) {
        Checks.index("position", position, length, "length ");
        Checks.index("layer", layer, cache.layout.layers(), "");
    }

    @GuardedBy("cache.lock")
    private void checkOpen() {
        checkClosed();
        cache.checkOpen();
    }

    private void checkClosed() {
        if (closed) {
            throw new IllegalStateException("sequence is closed");
        }
    }
}
