package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The medians the commands print. */
class MediansTest {

    @Test
    void medianOfAnOddCountIsTheMiddleValueAndOfAnEvenCountTheMeanOfTheTwoMiddleOnes() {
        double[] odd = {3, 1, 2};
        assertEquals(2, Medians.median(odd));
        assertEquals(3, odd[0], "not modified");
        assertEquals(2.5, Medians.median(new double[] {4, 1, 3, 2}));
        assertEquals(7, Medians.median(new double[] {7}));
    }

    @Test
    void medianAndRangeGivesThreeDecimals() {
        assertEquals("0.900 (min 0.850, max 1.100)", Medians.medianAndRange(new double[] {1.1, 0.85, 0.9}));
    }

    @Test
    void noValuesIsAnError() {
        assertEquals("values: none (expected at least one)",
                assertThrows(IllegalArgumentException.class, () -> Medians.median(new double[0])).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Medians.medianAndRange(new double[0]));
    }
}
