package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.store.DiskFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

/** Damages disk records in their segment files, as a failing disk does, for tests of what a reader then finds. */
final class RecordDamage {

    /** The first record of a segment, the first written to it. */
    static final long FIRST_RECORD = DiskFormat.SEGMENT_HEADER_BYTES;
    /** Inside the first record's payload (16-token blocks): covered by the payload's CRC32C only. */
    static final long FIRST_PAYLOAD = FIRST_RECORD + DiskFormat.RECORD_HEADER_BYTES + BlockIdentity.bytes(16) + 100;
    /** The first record's hash field: its header checksum fails, and a match alone finds it. */
    static final long FIRST_HEADER = FIRST_RECORD + 16;

    private RecordDamage() {
    }

    /**
     * Overwrites 8 bytes at {@code position} in every segment file of a disk tier's directory.
     *
     * @param dir      the disk tier's directory
     * @param position the file offset
     * @throws IOException if a file cannot be written
     */
    static void damage(Path dir, long position) throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(p -> p.getFileName().toString().startsWith("seg-")).toList();
        }
        assertFalse(files.isEmpty(), "segment files in " + dir);
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}), position);
            }
        }
    }
}
