package io.tierkv.bench.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The llama2.c tokenizer against the oracle's prompt and texts. */
class TokenizerTest {

    /**
     * BPE encoding of the oracle prompt gives the oracle's ids; EOS is appended on request.
     *
     * @throws Exception when the shared data cannot be read
     */
    @Test
    void encodesTheOraclePromptAsLlama2c() throws Exception {
        Stories260K s = Stories260K.get();
        assertArrayEquals(s.promptIds(), s.tokenizer().encode(s.prompt(), true, false));
        int[] withEos = s.tokenizer().encode(s.prompt(), true, true);
        assertEquals(Tokenizer.EOS, withEos[withEos.length - 1]);
        assertEquals(s.promptIds().length + 1, withEos.length);
    }

    /**
     * Decoding gives the oracle's texts.
     *
     * @throws Exception when the shared data cannot be read
     */
    @Test
    void decodesTheOracleTexts() throws Exception {
        Stories260K s = Stories260K.get();
        // The BOS is silent and the dummy-prefix space after it is dropped, as llama2.c prints it.
        assertEquals(s.prompt(), s.tokenizer().decode(s.promptIds()));
        // greedy_from_bos.text is the joined pieces with <0x0A> already turned into a newline.
        assertEquals(s.greedyText(), s.tokenizer().decode(s.greedyIds()));
        // prompt_case.text keeps the raw <0x0A> piece.
        assertEquals(s.promptText().replace("<0x0A>", "\n"), s.tokenizer().decode(s.promptNext()));
    }

    /**
     * Text outside the vocabulary round-trips through byte-fallback tokens.
     *
     * @throws Exception when the shared data cannot be read
     */
    @Test
    void roundTripsTextWithByteFallback() throws Exception {
        Tokenizer t = Stories260K.get().tokenizer();
        for (String text : new String[] {"", " leading space", "Tom said: \"Grüße, ☃ 😀!\"\n\tok.", "x"}) {
            int[] ids = t.encode(text, true, false);
            assertEquals(Tokenizer.BOS, ids[0]);
            assertEquals(text, t.decode(ids), text);
        }
        assertArrayEquals(new int[0], t.encode("", false, false));
        // U+2603 is not in a 512-token vocabulary: three byte-fallback tokens 3 + 0xE2, 0x98, 0x83.
        assertArrayEquals(new int[] {3 + 0xE2, 3 + 0x98, 3 + 0x83},
                Arrays.copyOfRange(t.encode("☃", false, false), 1, 4));
        assertThrows(IndexOutOfBoundsException.class, () -> t.decode(new int[] {t.vocabSize()}));
    }
}
