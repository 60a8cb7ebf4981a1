package io.tierkv.jlama;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * little-endian longs), then its bytes: all of them for a file of at most {@value #WHOLE_BYTES}
 * bytes (a {@code config.json}, a tokenizer, a small model's weights); for a larger one its first
 * and last {@value #HEAD_BYTES} bytes and {@value #SAMPLES} runs of {@value #SAMPLE_BYTES} bytes
 * spread evenly between them. The key is the digest's first 8 bytes, little-endian.
 *
 * <p>What it tells apart: any change to a file up to {@value #WHOLE_BYTES} bytes; weights rewritten
 * in place (a new modification time); other weights whose sampled bytes differ. Two large weight
 * files that differ only between the samples and carry the same size and time (an archive
 * unpacked twice with its times kept) get one key: give such a model a key of its own (a name and
 * version) as a session's extra key instead. Reading costs a file's size up to
 * {@value #WHOLE_BYTES} bytes, and about 6 MiB per file above. Stateless and thread-safe.
 */
public final class ModelFingerprint {

    /** Files up to this size are read whole. */
    static final long WHOLE_BYTES = 256L << 20;
    /** Bytes read from each end of a larger file. */
    static final int HEAD_BYTES = 1 << 20;
    /** Runs read between the ends of a larger file. */
    static final int SAMPLES = 64;
    /** Bytes per run. */
    static final int SAMPLE_BYTES = 64 << 10;

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
                digestContent(sha, f, head);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + f, e);
            }
        }
        return ByteBuffer.wrap(sha.digest()).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    /** Feeds a file's bytes to the digest: all of them, or the ends and the samples of a large file. */
    private static void digestContent(MessageDigest sha, Path f, byte[] buffer) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size <= WHOLE_BYTES) {
                digestRun(sha, ch, 0, size, buffer);
                return;
            }
            digestRun(sha, ch, 0, HEAD_BYTES, buffer);
            long span = size - 2L * HEAD_BYTES - SAMPLE_BYTES;
            for (int i = 0; i < SAMPLES; i++) {
                digestRun(sha, ch, HEAD_BYTES + span * i / (SAMPLES - 1), SAMPLE_BYTES, buffer);
            }
            digestRun(sha, ch, size - HEAD_BYTES, HEAD_BYTES, buffer);
        }
    }

    private static void digestRun(MessageDigest sha, FileChannel ch, long from, long length, byte[] buffer)
            throws IOException {
        ByteBuffer bb = ByteBuffer.wrap(buffer);
        long at = from;
        long end = from + length;
        while (at < end) {
            bb.clear().limit((int) Math.min(buffer.length, end - at));
            int n = ch.read(bb, at);
            if (n < 0) {
                break;
            }
            sha.update(buffer, 0, n);
            at += n;
        }
    }
}
