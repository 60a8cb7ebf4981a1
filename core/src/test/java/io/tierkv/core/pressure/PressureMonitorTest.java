package io.tierkv.core.pressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PressureMonitorTest {

    @Test
    void modesFollowTheWatermarksWithHysteresis() {
        PressureMonitor m = new PressureMonitor(PressureWatermarks.defaults(), 0);
        assertEquals(PressureMode.RELAXED, m.update(0.5, 1));
        assertEquals(PressureMode.NORMAL, m.update(0.70, 2));
        assertEquals(PressureMode.NORMAL, m.update(0.68, 3), "within hysteresis: stays");
        assertEquals(PressureMode.RELAXED, m.update(0.66, 4));
        assertEquals(PressureMode.EMERGENCY, m.update(0.97, 5));
        assertEquals(PressureMode.EMERGENCY, m.update(0.94, 6));
        assertEquals(PressureMode.CRITICAL, m.update(0.92, 7));
        assertEquals(PressureMode.PRESSURE, m.update(0.88, 8));
        assertEquals(5, m.transitions());
        assertEquals(2L, m.nanosInMode(10).get(PressureMode.PRESSURE));
    }

    @Test
    void watermarksOutOfOrderAreRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new PressureWatermarks(0.8, 0.7, 0.9, 0.95, 0.01));
        assertEquals("normal: 0.8 (expected 0.0 < normal < 0.7)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PressureWatermarks(0.7, 0.8, 0.9, 1.1, 0.01));
        assertThrows(IllegalArgumentException.class, () -> new PressureWatermarks(0.7, 0.8, 0.9, 0.95, 0.7));
        assertThrows(IllegalArgumentException.class, () -> new PressureMonitor(PressureWatermarks.defaults(), 0)
                .update(Double.NaN, 1));
    }
}
