package io.tierkv.bench.model;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The byte-pair tokenizer of llama2.c ({@code tokenizer.bin} / {@code tok512.bin}), with its
 * encoder (score-greedy merges) and a decoder. Immutable and thread-safe after {@link #load}.
 *
 * <p>File format (llama2.c {@code tokenizer.py export}, little-endian): int32
 * {@code max_token_length}, then per token id: float32 merge score, int32 byte length, the bytes.
 * Ids 0, 1 and 2 are {@code <unk>}, BOS and EOS; ids 3 to 258 are the byte-fallback tokens
 * {@code <0x00>} to {@code <0xFF>}.
 */
public final class Tokenizer {

    /** Beginning-of-sequence token id. */
    public static final int BOS = 1;
    /** End-of-sequence token id. */
    public static final int EOS = 2;
    /** Id of the byte-fallback token of byte 0x00; byte b is {@code BYTE_FALLBACK + b}. */
    private static final int BYTE_FALLBACK = 3;

    /** Token bytes, as ISO-8859-1 strings (one char per byte, so any bytes round-trip). */
    private final String[] vocab;
    private final float[] scores;
    /** What each token decodes to: its bytes, or the single byte of a {@code <0xXX>} token. */
    private final byte[][] decoded;
    private final Map<String, Integer> ids;

    private Tokenizer(String[] vocab, float[] scores) {
        this.vocab = vocab;
        this.scores = scores;
        this.decoded = new byte[vocab.length][];
        this.ids = new HashMap<>(vocab.length * 2);
        for (int id = 0; id < vocab.length; id++) {
            ids.putIfAbsent(vocab[id], id);
            String s = vocab[id];
            boolean byteToken = s.length() == 6 && s.startsWith("<0x") && s.endsWith(">")
                    && id == BYTE_FALLBACK + Integer.parseInt(s.substring(3, 5), 16);
            decoded[id] = byteToken ? new byte[] {(byte) (id - BYTE_FALLBACK)} : s.getBytes(StandardCharsets.ISO_8859_1);
        }
    }

    /**
     * Reads a llama2.c tokenizer file.
     *
     * @param file      for example {@code tok512.bin}
     * @param vocabSize tokens the file holds (the model's vocabulary size)
     * @return the tokenizer
     * @throws IOException when the file cannot be read, is truncated, has a negative length, holds
     *                     bytes after the last token, its byte-fallback range is malformed or it has
     *                     no {@code " "} token
     * @throws IllegalArgumentException when {@code vocabSize < 259} (the special and byte tokens)
     */
    public static Tokenizer load(Path file, int vocabSize) throws IOException {
        if (vocabSize < BYTE_FALLBACK + 256) {
            throw new IllegalArgumentException("vocabSize: " + vocabSize + " (expected >= " + (BYTE_FALLBACK + 256)
                    + ")");
        }
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        String[] vocab = new String[vocabSize];
        float[] scores = new float[vocabSize];
        try {
            buf.getInt(); // max_token_length: llama2.c sizes a buffer with it; not needed here
            for (int id = 0; id < vocabSize; id++) {
                scores[id] = buf.getFloat();
                int len = buf.getInt();
                if (len < 0) {
                    throw new IOException(file + ": token " + id + " has length " + len + " (expected >= 0)");
                }
                byte[] bytes = new byte[len];
                buf.get(bytes);
                vocab[id] = new String(bytes, StandardCharsets.ISO_8859_1);
            }
        } catch (BufferUnderflowException e) {
            throw new IOException(file + ": truncated (expected " + vocabSize + " tokens)", e);
        }
        if (buf.hasRemaining()) {
            throw new IOException(file + ": " + buf.remaining() + " bytes after token " + (vocabSize - 1)
                    + " (expected none)");
        }
        for (int b = 0; b < 256; b++) {
            String expected = String.format("<0x%02X>", b);
            if (!vocab[BYTE_FALLBACK + b].equals(expected)) {
                throw new IOException(file + ": token " + (BYTE_FALLBACK + b) + " is '" + vocab[BYTE_FALLBACK + b]
                        + "' (expected the byte-fallback token " + expected + ")");
            }
        }
        if (!List.of(vocab).contains(" ")) {
            throw new IOException(file + ": no token for ' ' (expected one, the dummy prefix of encode)");
        }
        return new Tokenizer(vocab, scores);
    }

    /**
     * Returns the number of tokens in the vocabulary.
     *
     * @return the vocabulary size
     */
    public int vocabSize() {
        return vocab.length;
    }

    /**
     * Encodes text as llama2.c {@code run.c} {@code encode()} does: optional BOS; a dummy-prefix
     * space token when the text is not empty (SentencePiece's {@code add_dummy_prefix}); one token
     * per UTF-8 code point, or its bytes as byte-fallback tokens when the code point is not in the
     * vocabulary; then, repeatedly, the adjacent pair whose concatenation is a token with the
     * highest score (the first such pair on ties) is merged, until no pair merges; optional EOS.
     *
     * @param text the text (any Java string; unpaired surrogates encode as U+FFFD)
     * @param bos  whether to start with {@link #BOS}
     * @param eos  whether to end with {@link #EOS}
     * @return the token ids
     */
    public int[] encode(String text, boolean bos, boolean eos) {
        List<Integer> tokens = new ArrayList<>(text.length() + 3);
        if (!text.isEmpty()) {
            tokens.add(ids.get(" "));
        }
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            byte[] utf8 = Character.toString(cp).getBytes(StandardCharsets.UTF_8);
            Integer id = ids.get(new String(utf8, StandardCharsets.ISO_8859_1));
            if (id != null) {
                tokens.add(id);
            } else {
                for (byte b : utf8) {
                    tokens.add(BYTE_FALLBACK + (b & 0xff));
                }
            }
        }
        while (true) {
            float bestScore = -1e10f;
            int bestId = -1;
            int bestIndex = -1;
            for (int i = 0; i + 1 < tokens.size(); i++) {
                Integer id = ids.get(vocab[tokens.get(i)] + vocab[tokens.get(i + 1)]);
                if (id != null && scores[id] > bestScore) {
                    bestScore = scores[id];
                    bestId = id;
                    bestIndex = i;
                }
            }
            if (bestIndex < 0) {
                break;
            }
            tokens.set(bestIndex, bestId);
            tokens.remove(bestIndex + 1);
        }
        int[] out = new int[tokens.size() + (bos ? 1 : 0) + (eos ? 1 : 0)];
        int n = 0;
        if (bos) {
            out[n++] = BOS;
        }
        for (int id : tokens) {
            out[n++] = id;
        }
        if (eos) {
            out[n] = EOS;
        }
        return out;
    }

    /**
     * Decodes token ids to text as llama2.c {@code run.c} {@code decode()} prints them: a token
     * right after BOS loses its leading space (the dummy prefix), a {@code <0xXX>} token is the raw
     * byte, and the bytes are read as UTF-8 (malformed sequences become U+FFFD). BOS and EOS
     * themselves produce no text.
     *
     * @param tokens token ids, each in [0, {@link #vocabSize()})
     * @return the text
     * @throws IndexOutOfBoundsException when an id is outside the vocabulary
     */
    public String decode(int[] tokens) {
        var out = new ByteArrayOutputStream(tokens.length * 4);
        int prev = -1;
        for (int token : tokens) {
            if (token < 0 || token >= vocab.length) {
                throw new IndexOutOfBoundsException("token: " + token + " (expected 0 <= token < " + vocab.length
                        + ")");
            }
            if (token != BOS && token != EOS) {
                byte[] piece = decoded[token];
                int skip = prev == BOS && piece.length > 0 && piece[0] == ' ' ? 1 : 0;
                out.write(piece, skip, piece.length - skip);
            }
            prev = token;
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
