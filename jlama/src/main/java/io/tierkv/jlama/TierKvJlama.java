package io.tierkv.jlama;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.safetensors.Config;
import com.github.tjake.jlama.tensor.KvBufferCache;
import com.github.tjake.jlama.tensor.TierKvBufferCache;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.KvBlockManager;
import java.lang.reflect.Field;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Installs a {@link KvBlockManager} as the KV cache of a loaded Jlama model: the model's
 * {@code kvBufferCache} field gets a {@link TierKvBufferCache}, whose per-session buffers are
 * zero-copy views onto TierKV blocks. Generate through {@link #openSession} and
 * {@link JlamaSession#generate}; {@link #close()} puts Jlama's own cache back.
 *
 * <pre>{@code
 * AbstractModel model = ModelSupport.loadModel(dir.toFile(), DType.F32, DType.F32);
 * KvLayout layout = TierKvJlama.layoutFor(model, 16);
 * try (var kv = KvBlockManager.builder(layout).device(new EmulatedDevice(), 64L << 20).host(64L << 20).build();
 *      var jlama = TierKvJlama.install(model, kv);
 *      var session = jlama.openSession(SequenceOptions.salt("tenant-a")
 *              .withExtraKeys(ModelFingerprint.of(dir)))) {
 *     Generation g = session.generate(promptIds, 32);   // full cached blocks of promptIds are not computed
 * }
 * }</pre>
 *
 * <p>The layout must be {@link #layoutFor(AbstractModel, int)}: L = the model's layers, H = its KV
 * heads, D = its head size, F32 (the model's working dtype must be F32), any block size. One
 * adapter per model at a time.
 *
 * <p>Thread-safe; each session is driven by one thread at a time, and sessions on several threads
 * take turns step by step: Jlama 0.8.4's forward pass is not safe for concurrent calls on one
 * model (a review saw stock Jlama give wrong tokens from two threads, each with its own KV cache),
 * so the adapter runs one forward step at a time (a fair lock, {@link #forwardLock}). Closing the
 * adapter or a session waits for a step in flight to end; the session's next step then throws.
 */
public final class TierKvJlama implements AutoCloseable {

    private static final Field KV_BUFFER_CACHE = kvBufferCacheField();

    private final AbstractModel model;
    private final KvBlockManager manager;
    private final TierKvBufferCache cache;
    private final KvBufferCache original;
    private final Set<JlamaSession> sessions = ConcurrentHashMap.newKeySet();
    /**
     * Held for each forward step of every session of this adapter (from its lease to the lease's
     * release), and from a session's prefix match to its first step, so that steps never overlap
     * and a session's prefix hits are its own; fair, so sessions take turns.
     */
    final java.util.concurrent.locks.ReentrantLock forwardLock = new java.util.concurrent.locks.ReentrantLock(true);
    /** {@link #loadKey(AbstractModel)} of the model, added to every session's extra keys. */
    private final long loadKey;
    private volatile boolean closed;

    private TierKvJlama(AbstractModel model, KvBlockManager manager, KvBufferCache original) {
        this.model = model;
        this.manager = manager;
        this.original = original;
        this.cache = new TierKvBufferCache(model);
        this.loadKey = loadKey(model);
    }

    /**
     * How the model was loaded, as a 64-bit key: one directory loaded with other options (weights
     * quantized at load, another working quantization) computes other KV, which a {@link
     * ModelFingerprint} of the directory cannot tell apart (found by a review: a Q4 load was
     * handed the F32 load's blocks and generated the F32 load's tokens). Formula: the first 8 bytes,
     * little-endian, of SHA-256 over the UTF-8 text {@code "jlama-load-v1"} followed by
     * {@code ";modelDType=X;workingDType=X;workingQType=X;modelQType=X"} with Jlama's dtype names
     * ({@code none} for no load-time quantization), read from the model's fields.
     *
     * @param model a loaded model
     * @return the key
     * @throws IllegalStateException if this Jlama has no such fields (expected Jlama 0.8.4)
     */
    public static long loadKey(AbstractModel model) {
        String text = "jlama-load-v1;modelDType=" + field(model, "modelDType") + ";workingDType="
                + field(model, "workingDType") + ";workingQType=" + field(model, "workingQType") + ";modelQType="
                + ((java.util.Optional<?>) field(model, "modelQType")).map(Object::toString).orElse("none");
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.nio.ByteBuffer.wrap(d).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    private static Object field(AbstractModel model, String name) {
        try {
            Field f = AbstractModel.class.getDeclaredField(name);
            f.setAccessible(true);
            return f.get(model);
        } catch (NoSuchFieldException | IllegalAccessException e) {
            throw new IllegalStateException("cannot read AbstractModel." + name + " (expected Jlama 0.8.4)", e);
        }
    }

    /**
     * The block layout for a model: its layers, KV heads and head size, F32.
     *
     * @param model           a loaded Jlama model (not distributed over several nodes)
     * @param blockSizeTokens tokens per block, B
     * @return the layout
     * @throws IllegalArgumentException if the model's working dtype is not F32, if it is split over
     *                                  several nodes, or the layout is invalid (B out of range)
     */
    public static KvLayout layoutFor(AbstractModel model, int blockSizeTokens) {
        Config c = Objects.requireNonNull(model, "model").getConfig();
        if (model.getWorkingDType() != com.github.tjake.jlama.safetensors.DType.F32) {
            throw new IllegalArgumentException("model working dtype: " + model.getWorkingDType()
                    + " (expected F32: load the model with workingMemoryType DType.F32)");
        }
        if (c.dctx().kvSegmentLength != c.kvLength || c.dctx().numberOfLayers != c.numberOfLayers) {
            throw new IllegalArgumentException("model is split over nodes (kv segment " + c.dctx().kvSegmentLength
                    + " of " + c.kvLength + ", layers " + c.dctx().numberOfLayers + " of " + c.numberOfLayers
                    + "): only a whole model is supported");
        }
        return KvLayout.of(c.numberOfLayers, c.numberOfKeyValueHeads, c.headSize, DType.F32, blockSizeTokens);
    }

    /**
     * Installs the manager as the model's KV cache.
     *
     * @param model   a loaded model with F32 working dtype
     * @param manager a manager whose layout is {@code layoutFor(model, B)} for some B; not closed by
     *                this adapter
     * @return the adapter; close it to put Jlama's own cache back
     * @throws IllegalArgumentException if the manager's layout does not match the model
     * @throws IllegalStateException    if another adapter is installed in the model
     */
    public static TierKvJlama install(AbstractModel model, KvBlockManager manager) {
        Objects.requireNonNull(manager, "manager");
        KvLayout expected = layoutFor(model, manager.layout().blockSizeTokens());
        if (!expected.equals(manager.layout())) {
            throw new IllegalArgumentException("manager layout: " + manager.layout() + " (expected " + expected
                    + " for this model)");
        }
        synchronized (model) {
            KvBufferCache current = get(model);
            if (current instanceof TierKvBufferCache) {
                throw new IllegalStateException("a TierKV adapter is installed in this model already");
            }
            TierKvJlama adapter = new TierKvJlama(model, manager, current);
            set(model, adapter.cache);
            return adapter;
        }
    }

    /**
     * Opens a session: a TierKV sequence with these options (its salt and extra keys decide which
     * cached blocks it may share) and its Jlama KV buffer under a new session id. TierKV cannot see
     * the model's weights: give the model's {@link ModelFingerprint} as an extra key, or another
     * model of the same layout sharing the manager or its persistent disk tier would be handed
     * this model's KV. The adapter appends the model's {@link #loadKey} to the extra keys itself,
     * so two loads of one directory with other load options never share blocks.
     *
     * @param options the sequence options (its extra keys, then the load key, go to the sequence)
     * @return the session; close it (its sealed blocks stay cached for later sessions)
     * @throws IllegalStateException if the adapter is closed
     */
    public JlamaSession openSession(SequenceOptions options) {
        if (closed) {
            throw new IllegalStateException("adapter is closed");
        }
        long[] keys = options.extraKeys();
        long[] withLoad = java.util.Arrays.copyOf(keys, keys.length + 1);
        withLoad[keys.length] = loadKey;
        JlamaSession s = new JlamaSession(this, UUID.randomUUID(), manager.openSequence(options.withExtraKeys(withLoad)));
        sessions.add(s);
        return s;
    }

    /** {@return the model} */
    public AbstractModel model() {
        return model;
    }

    /** {@return the manager that holds the KV} */
    public KvBlockManager manager() {
        return manager;
    }

    TierKvBufferCache cache() {
        return cache;
    }

    void closed(JlamaSession s) {
        sessions.remove(s);
    }

    /**
     * Closes every open session and puts Jlama's own KV cache back into the model, after the
     * forward step in flight, if any, ends (a session generating on another thread then fails at
     * its next step); idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        forwardLock.lock();
        try {
            for (JlamaSession s : sessions.toArray(JlamaSession[]::new)) {
                s.close();
            }
            synchronized (model) {
                if (get(model) == cache) {
                    set(model, original);
                }
            }
        } finally {
            forwardLock.unlock();
        }
    }

    private static Field kvBufferCacheField() {
        try {
            Field f = AbstractModel.class.getDeclaredField("kvBufferCache");
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("Jlama's AbstractModel has no field kvBufferCache (expected Jlama 0.8.4)", e);
        }
    }

    private static KvBufferCache get(AbstractModel model) {
        try {
            return (KvBufferCache) KV_BUFFER_CACHE.get(model);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read AbstractModel.kvBufferCache", e);
        }
    }

    private static void set(AbstractModel model, KvBufferCache value) {
        try {
            KV_BUFFER_CACHE.set(model, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot set AbstractModel.kvBufferCache", e);
        }
    }
}
