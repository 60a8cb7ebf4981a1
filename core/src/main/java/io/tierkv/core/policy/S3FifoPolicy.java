package io.tierkv.core.policy;

/**
 * S3-FIFO: a small FIFO queue that filters one-hit wonders, a main FIFO queue with reinsertion,
 * and a ghost queue remembering what the small queue let go.
 *
 * <p><b>Algorithm</b> (Yang et al., below; parameters of libCacheSim's {@code S3FIFO.c}):
 * <ul>
 *   <li>Each candidate has a 2-bit access count; {@link #onAccess} on a candidate adds one, up to 3.
 *   <li>Admission puts a block in the main queue if its content key is in the ghost queue (the
 *       ghost entry is consumed), else in the small queue.
 *   <li>{@link #victim()} takes from the small queue while it holds at least
 *       {@code smallRatio x capacity} candidates (10% by default), else from the main queue (and
 *       from whichever queue is not empty when one is). The oldest small-queue block moves to the
 *       main queue with its count cleared if it was accessed at least once, and the search goes
 *       on; otherwise it is the victim. The oldest main-queue block goes back to the newest end
 *       with its count decreased by one if the count is positive; otherwise it is the victim.
 *   <li>The eviction of a small-queue block (its removal after {@code victim()} named it) enters
 *       its content key into the ghost queue, a FIFO of {@code capacity - smallTarget} keys (as
 *       many as the main queue holds) whose oldest key leaves when it is full.
 * </ul>
 * The victim search is amortised O(1): every move it makes spends an access count or moves a
 * block out of the small queue. Admission, access and removal are O(1).
 *
 * <p><b>Structure.</b> The small and main queues are intrusive lists over the block ids. The
 * ghost queue is a ring of keys with a linear-probing hash table (key -> ring sequence number) of
 * twice its size, so ghost lookup, insertion and consumption are O(1) expected; a ring slot whose
 * key was consumed is skipped when it leaves. All arrays are sized at construction; nothing is
 * allocated per call. The two-argument {@link #onAdmit(int, int)} uses the block id as the
 * content key. Priorities are ignored. Not thread-safe.
 *
 * <p>Sources: J. Yang, Y. Zhang, Z. Qiu, Y. Yue, K. V. Rashmi, "FIFO queues are all you need for
 * cache eviction", SOSP 2023 (Algorithm 1); reference implementation libCacheSim
 * {@code libCacheSim/cache/eviction/S3FIFO.c} (small queue 10%, ghost 90%, move to main after one
 * access).
 */
public final class S3FifoPolicy extends AbstractPolicy {

    /** Default fraction of the capacity the small queue is kept at: 0.10, as in the paper. */
    public static final double DEFAULT_SMALL_RATIO = 0.10;
    /** Saturation of the per-block access count (2 bits). */
    public static final int MAX_FREQ = 3;

    private static final int SMALL = 0;
    private static final int MAIN = 1;
    private static final byte NONE = -1;
    private static final long MAX_TABLE = 1L << 30;

    private final IntrusiveLists queues;
    /** SMALL, MAIN, or NONE when not a candidate. */
    private final byte[] queueOf;
    private final byte[] freq;
    private final long[] keyOf;
    private final int smallTarget;

    // Ghost queue: ring of keys in sequence order, plus a key -> sequence hash table.
    private final long[] ghostRing;
    private long ghostHeadSeq;
    private long ghostNextSeq;
    private final long[] tableKey;
    /** Sequence number of the key's newest ghost entry, or -1 for an empty slot. */
    private final long[] tableSeq;
    private final int tableMask;

    /**
     * Creates an empty policy over block ids {@code [0, capacity)} with a small queue of
     * {@value #DEFAULT_SMALL_RATIO} of the capacity.
     *
     * @param capacity number of block ids (the cache size in blocks); {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public S3FifoPolicy(int capacity) {
        this(capacity, DEFAULT_SMALL_RATIO);
    }

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity   number of block ids (the cache size in blocks); {@code > 0}
     * @param smallRatio fraction of the capacity for the small queue, in {@code (0, 1)}; the
     *                   small queue's target is {@code max(1, round(smallRatio x capacity))} and
     *                   the ghost queue holds {@code max(1, capacity - target)} keys
     * @throws IllegalArgumentException if a parameter is out of range (the message names it)
     */
    public S3FifoPolicy(int capacity, double smallRatio) {
        super("s3fifo", capacity);
        if (!(smallRatio > 0.0 && smallRatio < 1.0)) {
            throw new IllegalArgumentException("smallRatio: " + smallRatio + " (expected in (0, 1))");
        }
        queues = new IntrusiveLists(capacity, 2);
        queueOf = new byte[capacity];
        java.util.Arrays.fill(queueOf, NONE);
        freq = new byte[capacity];
        keyOf = new long[capacity];
        smallTarget = (int) Math.max(1, Math.round(smallRatio * capacity));
        int ghostSize = Math.max(1, capacity - smallTarget);
        ghostRing = new long[ghostSize];
        long tableSize = Long.highestOneBit(2L * ghostSize - 1) << 1; // power of two >= 2 x ghost
        if (tableSize > MAX_TABLE) {
            throw new IllegalArgumentException("capacity: " + capacity
                    + " (expected at most " + (MAX_TABLE / 2 + smallTarget) + " for S3-FIFO's ghost table)");
        }
        tableKey = new long[(int) tableSize];
        tableSeq = new long[(int) tableSize];
        java.util.Arrays.fill(tableSeq, -1L);
        tableMask = (int) tableSize - 1;
    }

    /**
     * The small queue's length.
     *
     * @return the number of candidates in the small queue
     */
    public int smallSize() {
        return queues.size(SMALL);
    }

    /**
     * The main queue's length.
     *
     * @return the number of candidates in the main queue
     */
    public int mainSize() {
        return queues.size(MAIN);
    }

    /**
     * The small queue's target length.
     *
     * @return the number of candidates the small queue is kept at, at least 1
     */
    public int smallTarget() {
        return smallTarget;
    }

    /**
     * Whether a content key is remembered by the ghost queue (admitting it goes to the main queue).
     *
     * @param contentKey a key given at admission (the block id for the two-argument admit)
     * @return whether the key is in the ghost queue
     */
    public boolean inGhost(long contentKey) {
        return findSlot(contentKey) >= 0;
    }

    @Override
    public void onAdmit(int blockId, int priority, long contentKey) {
        checkId(blockId);
        if (queueOf[blockId] != NONE) {
            throw alreadyCandidate(blockId);
        }
        keyOf[blockId] = contentKey;
        int slot = findSlot(contentKey);
        if (slot >= 0) {
            deleteSlot(slot);
            enqueue(MAIN, blockId);
        } else {
            enqueue(SMALL, blockId);
        }
    }

    private void enqueue(int queue, int id) {
        queueOf[id] = (byte) queue;
        queues.addLast(queue, id);
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
        if (queueOf[blockId] != NONE && freq[blockId] < MAX_FREQ) {
            freq[blockId]++;
        }
    }

    @Override
    public void onRemove(int blockId) {
        checkId(blockId);
        boolean evicted = consumeVictim(blockId);
        int q = queueOf[blockId];
        if (q == NONE) {
            return;
        }
        queues.remove(q, blockId);
        queueOf[blockId] = NONE;
        if (evicted) {
            freq[blockId] = 0;
            if (q == SMALL) {
                ghostAdd(keyOf[blockId]);
            }
        }
    }

    @Override
    public int victim() {
        while (true) {
            int small = queues.size(SMALL);
            int main = queues.size(MAIN);
            if (small == 0 && main == 0) {
                lastVictim = IntrusiveLists.NIL;
                return lastVictim;
            }
            if (small > 0 && (small >= smallTarget || main == 0)) {
                int t = queues.first(SMALL);
                if (freq[t] >= 1) {
                    queues.remove(SMALL, t);
                    freq[t] = 0;
                    enqueue(MAIN, t);
                    continue;
                }
                lastVictim = t;
                return t;
            }
            int t = queues.first(MAIN);
            if (freq[t] > 0) {
                freq[t]--;
                queues.moveToLast(MAIN, t);
                continue;
            }
            lastVictim = t;
            return t;
        }
    }

    @Override
    public boolean contains(int blockId) {
        return queueOf[checkId(blockId)] != NONE;
    }

    @Override
    public int size() {
        return queues.size(SMALL) + queues.size(MAIN);
    }

    // ---- ghost queue ------------------------------------------------------------------------

    private static int mix(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    private int findSlot(long key) {
        int i = mix(key) & tableMask;
        while (tableSeq[i] >= 0) {
            if (tableKey[i] == key) {
                return i;
            }
            i = (i + 1) & tableMask;
        }
        return -1;
    }

    private void ghostAdd(long key) {
        if (ghostNextSeq - ghostHeadSeq == ghostRing.length) {
            long oldSeq = ghostHeadSeq++;
            int slot = findSlot(ghostRing[(int) (oldSeq % ghostRing.length)]);
            if (slot >= 0 && tableSeq[slot] == oldSeq) {
                deleteSlot(slot);
            }
        }
        long seq = ghostNextSeq++;
        ghostRing[(int) (seq % ghostRing.length)] = key;
        int slot = findSlot(key);
        if (slot >= 0) {
            tableSeq[slot] = seq;
            return;
        }
        int i = mix(key) & tableMask;
        while (tableSeq[i] >= 0) {
            i = (i + 1) & tableMask;
        }
        tableKey[i] = key;
        tableSeq[i] = seq;
    }

    /** Linear-probing deletion with backward shift (no tombstones). */
    private void deleteSlot(int slot) {
        int hole = slot;
        int i = slot;
        while (true) {
            i = (i + 1) & tableMask;
            if (tableSeq[i] < 0) {
                break;
            }
            int home = mix(tableKey[i]) & tableMask;
            // Move entry i into the hole if its home is not cyclically within (hole, i].
            boolean homeInRange = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!homeInRange) {
                tableKey[hole] = tableKey[i];
                tableSeq[hole] = tableSeq[i];
                hole = i;
            }
        }
        tableSeq[hole] = -1L;
    }
}
