package io.tierkv.jlama;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.stream.Stream;

/**
 * Which model a model directory holds, as a 64-bit key for {@link
 * io.tierkv.core.cache.SequenceOptions#withExtraKeys}: the KV a model computes is valid only for
 * that model, and TierKV tells models apart by their layout alone, so two models of one shape (a
 * fine-tune, other weights under the same {@code config.json}) would otherwise share cached blocks
 * and a persistent disk tier would hand one model the other's KV.
 *
 * <p>Formula: SHA-256 over every regular file of the directory (not its subdirectories), in name
 * order: its name, its size and its last-modified time in milliseconds (each as UTF-8 or
 * little-endian longs), then its first {@value #HEAD_BYTES} bytes (a {@code config.json}, a
 * tokenizer, a safetensors header and its first tensors). The key is the digest's first 8 bytes,
 * little-endian. Weights rewritten in place change their modification time, so they change the
 * key; a copy that keeps both (for example {@code cp -p} of the same files) is the same model and
 * keeps it. Reading costs at most {@value #HEAD_BYTES} bytes per file, whatever the model's size.
 * Stateless and thread-safe.
 */
public final class ModelFingerprint {

    /** Bytes read from the start of each file. */
    static final int HEAD_BYTES = 1 << 20;

    private ModelFingerprint() {
    }

    /**
     * Fingerprints a model directory.
     *
     * @param modelDir the directory the model was loaded from
     * @return the key
     * @throws IllegalArgumentException if {@code modelDir} is not a directory
     * @throws UncheckedIOException     if a file cannot be read
     */
    public static long of(Path modelDir) {
        if (!Files.isDirectory(modelDir)) {
            throw new IllegalArgumentException("modelDir: " + modelDir + " (expected a model directory)");
        }
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(modelDir)) {
            files = s.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) || Files.isRegularFile(p))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list model directory " + modelDir, e);
        }
        ByteBuffer longs = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        byte[] head = new byte[HEAD_BYTES];
        for (Path f : files) {
            try {
                sha.update(f.getFileName().toString().getBytes(StandardCharsets.UTF_8));
                longs.clear();
                longs.putLong(Files.size(f)).putLong(Files.getLastModifiedTime(f).toMillis());
                sha.update(longs.array());
                try (InputStream in = Files.newInputStream(f)) {
                    int n = in.readNBytes(head, 0, HEAD_BYTES);
                    sha.update(head, 0, n);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + f, e);
            }
        }
        return ByteBuffer.wrap(sha.digest()).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }
}
