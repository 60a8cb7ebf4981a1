package io.tierkv.bench.trace;

/**
 * A trace line that cannot be read: names the file, the 1-based line number and the field, so
 * the line can be found and fixed.
 *
 * <p>Message form: {@code conversation_trace.jsonl:17: field 'hash_ids': expected an array of
 * integers, got a string}.
 */
public final class TraceFormatException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The trace's name (a file path or a generator description). */
    private final String source;
    /** The 1-based line number. */
    private final long line;
    /** The offending field or column, or {@code (line)} for the line as a whole. */
    private final String field;

    /**
     * Creates the exception.
     *
     * @param source the trace's name, for example its path
     * @param line   1-based line number
     * @param field  the offending field or column, or {@code (line)}
     * @param detail what is wrong, with the value found
     * @param cause  the underlying parse failure, or {@code null}
     */
    public TraceFormatException(String source, long line, String field, String detail, Throwable cause) {
        super(source + ":" + line + ": field '" + field + "': " + detail, cause);
        this.source = source;
        this.line = line;
        this.field = field;
    }

    /**
     * The trace the line belongs to.
     *
     * @return the trace's name, for example its path
     */
    public String source() {
        return source;
    }

    /**
     * Where the bad line is.
     *
     * @return the 1-based line number
     */
    public long line() {
        return line;
    }

    /**
     * What is bad in the line.
     *
     * @return the field or column name, or {@code (line)}
     */
    public String field() {
        return field;
    }
}
