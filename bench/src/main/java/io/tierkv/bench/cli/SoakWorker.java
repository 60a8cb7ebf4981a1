package io.tierkv.bench.cli;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.tiers.KvBlockManager;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One soak worker: the random workload of one thread. Until told to stop it repeats, under the
 * {@link SoakManager}'s read lock, one operation chosen at random on documents drawn with a skew
 * towards low numbers (so prefixes repeat): request (45%), append (17%), lease (18%), fork (10%)
 * and close (10%) of a sequence it keeps open between operations (at most {@value #MAX_KEPT});
 * {@link SoakCommand}'s javadoc says what each does. Every byte read is checked by its
 * {@link SoakDocument}.
 *
 * <p>Back-pressure ({@code CapacityExhaustedException}, {@code TransferTimeoutException}) and a
 * block lost below ({@code CorruptBlockException}) end the operation and are counted, not faults;
 * any other throwable is kept in the tally and stops every worker.
 *
 * <p>Thread-safety: {@link #run()} on its own thread; {@link #closeKept()} from another thread
 * only while this one holds no read lock (a restart holds the write lock) or has stopped.
 */
final class SoakWorker implements Runnable {

    /** Most sequences a worker keeps open between operations. */
    static final int MAX_KEPT = 2;

    private final SoakManager manager;
    private final KvLayout layout;
    private final int documents;
    private final int maxBlocks;
    private final SoakTally tally;
    private final AtomicBoolean stop;
    private final Random rnd;
    private final List<Kept> kept = new ArrayList<>();
    private SoakDocument docs;

    /**
     * Creates a worker.
     *
     * @param manager   the manager under soak (and its lock)
     * @param layout    the layout
     * @param documents distinct documents, {@code >= 1}
     * @param maxBlocks longest request in blocks, {@code >= 1}
     * @param tally     counts operations and events
     * @param stop      set to stop every worker (a worker sets it on an unexpected throwable)
     * @param seed      the seed of this worker's choices
     */
    SoakWorker(SoakManager manager, KvLayout layout, int documents, int maxBlocks, SoakTally tally, AtomicBoolean stop,
            long seed) {
        this.manager = manager;
        this.layout = layout;
        this.documents = documents;
        this.maxBlocks = maxBlocks;
        this.tally = tally;
        this.stop = stop;
        this.rnd = new Random(seed);
    }

    @Override
    public void run() {
        try (Arena arena = Arena.ofConfined()) {
            docs = new SoakDocument(layout, tally, arena.allocate(layout.tokenVectorBytes(), 8),
                    arena.allocate(layout.tokenVectorBytes(), 8));
            while (!stop.get()) {
                manager.gate().readLock().lock();
                try {
                    KvBlockManager kv = manager.current();
                    if (kv == null) {
                        continue;
                    }
                    oneOperation(kv);
                } catch (CapacityExhaustedException | TransferTimeoutException e) {
                    tally.backPressure.increment();
                } catch (CorruptBlockException e) {
                    tally.lostBelow.increment();
                } catch (Throwable t) {
                    tally.unexpected.add(t);
                    stop.set(true);
                } finally {
                    manager.gate().readLock().unlock();
                }
            }
        } catch (Throwable t) {
            tally.unexpected.add(t);
            stop.set(true);
        }
    }

    /** Closes every kept sequence (the worker is between operations, or stopped). */
    void closeKept() {
        for (Kept s : kept) {
            s.seq.close();
        }
        kept.clear();
    }

    private int document() {
        double u = rnd.nextDouble();
        return (int) (u * u * documents); // skewed towards low numbers, so prefixes repeat
    }

    private void oneOperation(KvBlockManager kv) {
        int blockTokens = layout.blockSizeTokens();
        int r = rnd.nextInt(100);
        if (kept.isEmpty() || r < 45) {
            request(kv);
        } else if (r < 62) {
            Kept s = kept.get(rnd.nextInt(kept.size()));
            guarded(s, () -> {
                docs.extend(s.seq, s.doc, 1 + rnd.nextInt(32));
                tally.appends.increment();
            });
        } else if (r < 80) {
            Kept s = kept.get(rnd.nextInt(kept.size()));
            guarded(s, () -> {
                int len = s.seq.length();
                if (len > 0) {
                    int from = rnd.nextInt(len);
                    int to = from + 1 + rnd.nextInt(Math.min(len - from, SoakDocument.LEASE_CHUNK_BLOCKS * blockTokens));
                    docs.verify(s.seq, s.doc, from, to);
                }
                tally.leases.increment();
            });
        } else if (r < 90) {
            Kept s = kept.get(rnd.nextInt(kept.size()));
            guarded(s, () -> {
                try (Sequence f = s.seq.fork()) {
                    docs.extend(f, s.doc, rnd.nextInt(2 * blockTokens));
                    docs.verify(f, s.doc, 0, f.length());
                    docs.verify(s.seq, s.doc, Math.max(0, s.seq.length() - blockTokens), s.seq.length());
                }
                tally.forks.increment();
            });
        } else {
            Kept s = kept.remove(rnd.nextInt(kept.size()));
            s.seq.close();
            tally.closes.increment();
        }
    }

    /** Runs an operation on a kept sequence; on back-pressure the sequence is closed and dropped. */
    private void guarded(Kept s, Runnable op) {
        boolean ok = false;
        try {
            op.run();
            ok = true;
        } finally {
            if (!ok) {
                kept.remove(s);
                s.seq.close();
            }
        }
    }

    /**
     * Opens a sequence, matches the document's prefix, verifies the matched blocks, appends and
     * writes the rest, verifies everything, sometimes forks and extends it, then keeps or closes it.
     */
    private void request(KvBlockManager kv) {
        int blockTokens = layout.blockSizeTokens();
        int doc = document();
        int length = blockTokens * rnd.nextInt(maxBlocks) + 1 + rnd.nextInt(blockTokens);
        int[] prompt = new int[length];
        for (int i = 0; i < length; i++) {
            prompt[i] = SoakDocument.token(doc, i);
        }
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        boolean keep = false;
        try {
            int matched = s.matchPrefix(prompt);
            tally.matchedTokens.add(matched);
            if (matched > 0) {
                docs.verify(s, doc, 0, matched); // matched blocks first: possibly recovered disk records
            }
            docs.extend(s, doc, length - matched);
            docs.verify(s, doc, 0, length);
            if (rnd.nextInt(4) == 0) {
                try (Sequence f = s.fork()) {
                    docs.extend(f, doc, 1 + rnd.nextInt(blockTokens));
                    docs.verify(f, doc, Math.max(0, length - blockTokens), f.length());
                }
                tally.forks.increment();
            }
            tally.requests.increment();
            if (kept.size() < MAX_KEPT && rnd.nextBoolean()) {
                kept.add(new Kept(s, doc));
                keep = true;
            }
        } finally {
            if (!keep) {
                s.close();
            }
        }
    }

    /** A sequence a worker keeps open between operations, with its document. */
    private record Kept(Sequence seq, int doc) {
    }
}
