package io.tierkv.jlama;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What changes a model directory's key, and what keeps it. */
class ModelFingerprintTest {

    @TempDir
    Path dir;

    private Path model(String name, byte fill) throws Exception {
        Path m = Files.createDirectories(dir.resolve(name));
        Files.writeString(m.resolve("config.json"), "{\"dim\": 64}");
        byte[] weights = new byte[3 << 20]; // larger than what is read of it
        java.util.Arrays.fill(weights, fill);
        Files.write(m.resolve("model.safetensors"), weights);
        FileTime t = FileTime.fromMillis(1_700_000_000_000L);
        Files.setLastModifiedTime(m.resolve("config.json"), t);
        Files.setLastModifiedTime(m.resolve("model.safetensors"), t);
        return m;
    }

    @Test
    void aCopyWithItsTimesIsTheSameModelAndOtherWeightsOrTimesAreNot() throws Exception {
        Path a = model("a", (byte) 1);
        long key = ModelFingerprint.of(a);
        assertEquals(key, ModelFingerprint.of(a), "stable");
        Path copy = Files.createDirectories(dir.resolve("copy"));
        for (String f : new String[] {"config.json", "model.safetensors"}) {
            Files.copy(a.resolve(f), copy.resolve(f), StandardCopyOption.COPY_ATTRIBUTES);
        }
        assertEquals(key, ModelFingerprint.of(copy), "same files, names, sizes and times");
        assertNotEquals(key, ModelFingerprint.of(model("b", (byte) 2)), "other weights, same size and time");
        Files.setLastModifiedTime(copy.resolve("model.safetensors"), FileTime.fromMillis(1_700_000_000_001L));
        assertNotEquals(key, ModelFingerprint.of(copy), "weights rewritten: a new modification time");
        Path late = model("late", (byte) 1); // one byte past the first MiB, size and time kept
        byte[] w = Files.readAllBytes(late.resolve("model.safetensors"));
        w[(2 << 20) + 5] = 7;
        Files.write(late.resolve("model.safetensors"), w);
        Files.setLastModifiedTime(late.resolve("model.safetensors"), FileTime.fromMillis(1_700_000_000_000L));
        assertNotEquals(key, ModelFingerprint.of(late), "a file up to 256 MiB is read whole");
        Path renamed = model("c", (byte) 1);
        Files.move(renamed.resolve("model.safetensors"), renamed.resolve("model-00001.safetensors"));
        assertNotEquals(key, ModelFingerprint.of(renamed), "another file name");
        assertThrows(IllegalArgumentException.class, () -> ModelFingerprint.of(a.resolve("config.json")));
    }
}
