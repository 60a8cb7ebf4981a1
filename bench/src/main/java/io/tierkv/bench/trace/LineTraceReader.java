package io.tierkv.bench.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.NoSuchElementException;

/**
 * A trace read one text line per request: owns the file, the 1-based line number, blank-line
 * skipping and the iterator protocol; subclasses parse a line. Not thread-safe.
 */
abstract sealed class LineTraceReader implements TraceReader permits MooncakeTraceReader, AzureTraceReader {

    /** The file's path, for messages. */
    final String source;
    /** Tokens per block the ids were cut at. */
    final int blockSizeTokens;
    /** The open file. */
    final BufferedReader in;
    /** The 1-based number of the last line read. */
    long lineNumber;
    private TraceRequest pending;
    private boolean closed;

    LineTraceReader(Path file, int blockSizeTokens, String kind) {
        if (blockSizeTokens <= 0) {
            throw new IllegalArgumentException("blockSizeTokens: " + blockSizeTokens + " (expected > 0)");
        }
        this.source = file.toString();
        this.blockSizeTokens = blockSizeTokens;
        try {
            this.in = Files.newBufferedReader(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + kind + " trace " + file, e);
        }
    }

    /**
     * Parses one non-blank line.
     *
     * @param line the line, {@link #lineNumber} already counts it
     * @return the request
     * @throws TraceFormatException naming the file, line and field of a bad line
     */
    abstract TraceRequest parse(String line);

    @Override
    public final String source() {
        return source;
    }

    @Override
    public final int blockSizeTokens() {
        return blockSizeTokens;
    }

    @Override
    public final boolean hasNext() {
        if (pending == null && !closed) {
            pending = readNext();
        }
        return pending != null;
    }

    @Override
    public final TraceRequest next() {
        if (!hasNext()) {
            throw new NoSuchElementException("end of " + source + " after line " + lineNumber);
        }
        TraceRequest r = pending;
        pending = null;
        return r;
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            try {
                in.close();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot close " + source, e);
            }
        }
    }

    private TraceRequest readNext() {
        String line;
        try {
            do {
                line = in.readLine();
                if (line == null) {
                    close();
                    return null;
                }
                lineNumber++;
            } while (line.isBlank());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + source + " after line " + lineNumber, e);
        }
        return parse(line);
    }
}
