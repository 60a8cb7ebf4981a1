package io.tierkv.bench.cli;

import io.tierkv.observe.Observation;
import io.tierkv.bench.model.ArrayKvStore;
import io.tierkv.bench.model.Decoder;
import io.tierkv.bench.model.KvStore;
import io.tierkv.bench.model.LlamaConfig;
import io.tierkv.bench.model.LlamaModel;
import io.tierkv.bench.model.PagedKvStore;
import io.tierkv.bench.model.Tokenizer;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import io.tierkv.tiers.disk.Compression;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

/**
 * Greedy decoding with the model's K/V in TierKV ({@link TierKvStore}), and the same decoding
 * over plain Java arrays ({@link ArrayKvStore}) to check it against.
 *
 * <p><b>Branches.</b> {@code n} parallel sequences share one prompt: after the prompt, branch
 * {@code i} starts from the {@code i}-th most likely next token (0: the argmax, so branch 0 is
 * plain greedy decoding) and then continues greedily, so the branches diverge and each can be
 * checked against an independent run. Branch 0 prefills the prompt; the others share it by
 * {@link Share#FORK} ({@link Sequence#fork()} after the prompt: every block shared, the partial
 * last block copied on its first write) or by {@link Share#PREFIX} (a new sequence whose
 * {@link Sequence#matchPrefix} takes the prompt's full blocks, then prefills the rest). The
 * branches advance one token each in turn on the calling thread.
 */
public final class TierDecoding {

    /** How branches after the first share the prompt. */
    public enum Share {
        /** {@link Sequence#fork()} of branch 0 after the prompt. */
        FORK,
        /** A new sequence that matches the prompt's cached full blocks. */
        PREFIX
    }

    /**
     * The manager's shape for a decode.
     *
     * @param blockTokens  tokens per block
     * @param deviceBlocks device budget in blocks
     * @param hostBlocks   host budget in blocks, at least 1
     * @param diskDir      disk directory, or null for a temporary one (when diskBytes > 0)
     * @param diskBytes    disk budget, 0 for no disk tier
     * @param compression  disk compression
     * @param recentBlocks recent sealed blocks pinned on the device per sequence
     * @param movers       mover threads
     * @param read         attention's read path
     * @param readAhead    read-ahead blocks of the stream
     */
    public record Setup(int blockTokens, int deviceBlocks, int hostBlocks, Path diskDir, long diskBytes,
            Compression compression, int recentBlocks, int movers, TierKvStore.Read read, int readAhead) {
    }

    /**
     * The outcome of one decode.
     *
     * @param branches generated ids per branch (branch 0 = greedy)
     * @param forwards forward passes run (all branches)
     * @param nanos    wall time of the decode (manager construction excluded)
     * @param stats    the manager's counters after the decode, or null for arrays
     * @param matched  prompt tokens the PREFIX branches took from the cache (sum)
     */
    public record Result(List<int[]> branches, long forwards, long nanos, io.tierkv.tiers.TierStats stats,
            long matched) {

        /**
         * Forward passes per second.
         *
         * @return tokens per second
         */
        public double tokensPerSecond() {
            return nanos == 0 ? 0 : forwards * 1e9 / nanos;
        }
    }

    private TierDecoding() {
    }

    /**
     * Decodes over plain Java arrays (the reference), one independent run per branch.
     *
     * @param model  the model
     * @param prompt prompt ids (starting with BOS)
     * @param steps  tokens to generate per branch
     * @param n      branches
     * @return the result (stats null)
     */
    public static Result arrays(LlamaModel model, int[] prompt, int steps, int n) {
        return plain(model, prompt, steps, n, capacity -> ArrayKvStore.forModel(model.config(), capacity));
    }

    /**
     * Decodes over TierKV's block layout in plain off-heap memory without a manager
     * ({@link PagedKvStore}: the same blocks of B tokens, read one run per block, with no leases,
     * tiers or bookkeeping), one independent run per branch: what paging alone costs against the
     * arrays, the limit the manager's reads are measured against.
     *
     * @param model       the model
     * @param prompt      prompt ids (starting with BOS)
     * @param steps       tokens to generate per branch
     * @param n           branches
     * @param blockTokens B
     * @return the result (stats null)
     */
    public static Result paged(LlamaModel model, int[] prompt, int steps, int n, int blockTokens) {
        try (Arena arena = Arena.ofConfined()) {
            return plain(model, prompt, steps, n,
                    capacity -> new PagedKvStore(model.config().kvLayout(blockTokens), capacity, arena));
        }
    }

    /** One independent run per branch, each over a fresh store of prompt + steps positions. */
    private static Result plain(LlamaModel model, int[] prompt, int steps, int n, IntFunction<KvStore> stores) {
        int capacity = prompt.length + steps;
        List<int[]> out = new ArrayList<>();
        long forwards = 0;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Decoder d = new Decoder(model, stores.apply(capacity));
            float[] logits = d.prefill(prompt);
            Branch b = new Branch(d, t -> { }, Decoder.rank(logits, i), steps);
            while (!b.done) {
                b.step();
            }
            forwards += d.position();
            out.add(b.ids());
        }
        return new Result(out, forwards, System.nanoTime() - start, null, 0);
    }

    /**
     * Decodes with the K/V in a fresh {@link KvBlockManager} over an emulated device, closed
     * before returning.
     *
     * @param model  the model
     * @param setup  the manager's shape
     * @param prompt prompt ids (starting with BOS)
     * @param steps  tokens to generate per branch
     * @param n      branches
     * @param share  how branches 1.. share the prompt
     * @return the result with the manager's stats
     */
    public static Result tierkv(LlamaModel model, Setup setup, int[] prompt, int steps, int n, Share share) {
        return tierkv(model, setup, prompt, steps, n, share, Observation.none());
    }

    /**
     * As {@link #tierkv(LlamaModel, Setup, int[], int, int, Share)}, with the manager reporting KV
     * events and metrics ({@code --kv-events}, {@code --metrics-port}).
     *
     * @param model       the model
     * @param setup       the manager's shape
     * @param prompt      prompt ids (starting with BOS)
     * @param steps       tokens to generate per branch
     * @param n           branches
     * @param share       how branches 1.. share the prompt
     * @param observation the publisher and metrics endpoint the manager reports to
     * @return the result with the manager's stats
     */
    static Result tierkv(LlamaModel model, Setup setup, int[] prompt, int steps, int n, Share share,
            Observation observation) {
        LlamaConfig cfg = model.config();
        KvLayout layout = cfg.kvLayout(setup.blockTokens());
        long block = layout.bytesPerBlock();
        Path temp = null;
        try (EmulatedDevice device = new EmulatedDevice((setup.deviceBlocks() + 1L) * block)) {
            KvBlockManagerBuilder b = KvBlockManager.builder(layout)
                    .device(device, setup.deviceBlocks() * block)
                    .host(setup.hostBlocks() * block)
                    .recentDeviceBlocks(setup.recentBlocks())
                    .movers(setup.movers());
            if (setup.diskBytes() > 0) {
                Path dir = setup.diskDir();
                if (dir == null) {
                    temp = Interrupts.createTempDirectory("tierkv-decode-");
                    dir = temp.resolve("disk");
                }
                b.disk(Replayer.diskOptions(dir, layout, setup.diskBytes(), setup.compression()));
            }
            try (KvBlockManager kv = observation.configure(b).build()) {
                observation.attach(kv);
                return run(model, kv, setup, prompt, steps, n, share);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary disk directory", e);
        } finally {
            Interrupts.deleteTempDirectory(temp);
        }
    }

    private static Result run(LlamaModel model, KvBlockManager kv, Setup setup, int[] prompt, int steps, int n,
            Share share) {
        int capacity = prompt.length + steps;
        long start = System.nanoTime();
        List<TierKvStore> stores = new ArrayList<>();
        List<Branch> branches = new ArrayList<>();
        long matched = 0;
        try {
            TierKvStore root = new TierKvStore(kv, kv.openSequence(SequenceOptions.defaults()), capacity, setup.read(),
                    setup.readAhead());
            stores.add(root);
            Decoder d0 = new Decoder(model, root);
            float[] logits = prefill(d0, root, prompt);
            int[] firsts = new int[n];
            for (int i = 0; i < n; i++) {
                firsts[i] = Decoder.rank(logits, i);
            }
            branches.add(new Branch(d0, root::append, firsts[0], steps));
            for (int i = 1; i < n; i++) {
                TierKvStore s;
                Decoder d;
                if (share == Share.FORK) {
                    s = root.fork();
                    stores.add(s);
                    d = new Decoder(model, s, prompt.length);
                } else {
                    s = new TierKvStore(kv, kv.openSequence(SequenceOptions.defaults()), capacity, setup.read(),
                            setup.readAhead());
                    stores.add(s);
                    int m = s.sequence().matchPrefix(prompt, prompt.length - 1);
                    matched += m;
                    d = new Decoder(model, s, m);
                    float[] own = prefill(d, s, prompt);
                    if (!Arrays.equals(own, logits)) {
                        throw new IllegalStateException("branch " + i + ": logits after the prompt differ from branch 0's"
                                + " (prefix of " + m + " tokens reused)");
                    }
                }
                branches.add(new Branch(d, s::append, firsts[i], steps));
            }
            for (boolean any = true; any; ) {
                any = false;
                for (Branch br : branches) {
                    if (!br.done) {
                        br.step();
                        any = true;
                    }
                }
            }
            long nanos = System.nanoTime() - start;
            long forwards = branches.stream().mapToLong(br -> br.decoder.position()).sum()
                    - (share == Share.FORK ? (long) (n - 1) * prompt.length : matched);
            return new Result(branches.stream().map(Branch::ids).toList(), forwards, nanos, kv.stats(), matched);
        } finally {
            for (int i = stores.size() - 1; i >= 0; i--) {
                stores.get(i).close();
            }
        }
    }

    /** Runs the prompt from the decoder's position, appending each token first; returns the last logits. */
    private static float[] prefill(Decoder d, TierKvStore store, int[] prompt) {
        float[] out = null;
        for (int p = d.position(); p < prompt.length; p++) {
            store.append(prompt[p]);
            out = d.forward(prompt[p]);
        }
        return out;
    }


    /** One branch's greedy loop, one token per {@link #step()}, as {@link Decoder#generate} after its prefill. */
    private static final class Branch {
        private final Decoder decoder;
        private final IntConsumer append;
        private final int steps;
        private final int[] ids;
        private int count;
        private int next;
        private boolean done;

        Branch(Decoder decoder, IntConsumer append, int first, int steps) {
            this.decoder = decoder;
            this.append = append;
            this.steps = steps;
            this.ids = new int[steps];
            this.next = first;
            this.done = steps < 1;
        }

        void step() {
            if (next == Tokenizer.BOS) {
                done = true;
                return;
            }
            ids[count++] = next;
            if (count == steps) {
                done = true;
                return;
            }
            append.accept(next);
            next = Decoder.argmax(decoder.forward(next));
        }

        int[] ids() {
            return Arrays.copyOf(ids, count);
        }
    }
}
