package io.tierkv.bench.trace;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;

/**
 * A stream of {@link TraceRequest}s in arrival order, read one at a time (a trace file is never
 * loaded whole). Close it to release the file.
 *
 * <p>{@link #next()} throws {@link TraceFormatException} (file, line, field) for a bad line and
 * {@link UncheckedIOException} when the file cannot be read. Not thread-safe.
 */
public interface TraceReader extends Iterator<TraceRequest>, AutoCloseable {

    /** The block size of the Mooncake traces, in tokens. */
    int MOONCAKE_BLOCK_SIZE_TOKENS = 512;

    /**
     * The longest prompt or answer a trace file may give, in tokens: 2<sup>24</sup> = 16,777,216.
     * It is above the longest context window of any published model (10M tokens, Llama 4 Scout)
     * and over 100 times the longest prompt of the Mooncake and Azure traces, while a request of
     * that length stays replayable: the replay holds its prompt as one {@code int} per token, 64 MiB
     * at this bound, where a length near {@link Integer#MAX_VALUE} would need 8 GiB and end the
     * run out of memory. The file readers refuse a longer one with its file, line and field.
     */
    int MAX_LENGTH_TOKENS = 1 << 24;

    /**
     * Where the requests come from.
     *
     * @return a file path or a generator description
     */
    String source();

    /**
     * The block size the block ids of this trace were cut at.
     *
     * @return tokens per block, {@code > 0}
     */
    int blockSizeTokens();

    /**
     * Releases the file, if any. Idempotent.
     *
     * @throws UncheckedIOException if closing the file fails
     */
    @Override
    void close();

    /**
     * Reads every remaining request into a list and closes the reader.
     *
     * @return the requests, in trace order
     * @throws TraceFormatException for a bad line
     * @throws UncheckedIOException if the file cannot be read
     */
    default List<TraceRequest> readAll() {
        try (this) {
            List<TraceRequest> out = new ArrayList<>();
            while (hasNext()) {
                out.add(next());
            }
            return out;
        }
    }

    /**
     * Opens a trace file by its extension: {@code .jsonl} is a Mooncake trace, {@code .csv} an Azure
     * LLM inference trace, both at {@value #MOONCAKE_BLOCK_SIZE_TOKENS} tokens per block.
     *
     * @param file the trace file
     * @return a reader positioned at the first request
     * @throws IllegalArgumentException if the extension is neither
     * @throws UncheckedIOException if the file cannot be opened
     * @throws TraceFormatException if an Azure file's header is wrong
     */
    static TraceReader open(Path file) {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".jsonl")) {
            return new MooncakeTraceReader(file, MOONCAKE_BLOCK_SIZE_TOKENS);
        }
        if (name.endsWith(".csv")) {
            return new AzureTraceReader(file, MOONCAKE_BLOCK_SIZE_TOKENS);
        }
        throw new IllegalArgumentException("trace: " + file
                + " (expected a Mooncake .jsonl or an Azure LLM inference .csv file)");
    }
}
