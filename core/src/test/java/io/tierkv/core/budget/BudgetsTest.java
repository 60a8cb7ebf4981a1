package io.tierkv.core.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.core.error.BudgetExceededException;
import org.junit.jupiter.api.Test;

class BudgetsTest {

    @Test
    void zeroNegativeAndInfiniteBudgetsAreRejectedByName() {
        assertEquals("deviceBytes: 0 (expected 0 < deviceBytes <= 1152921504606846976)",
                assertThrows(IllegalArgumentException.class, () -> new Budgets(0, 1, 1, 1)).getMessage());
        assertEquals("diskBytes: -5 (expected 0 < diskBytes <= 1152921504606846976)",
                assertThrows(IllegalArgumentException.class, () -> new Budgets(1, 1, 1, -5)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Budgets(Long.MAX_VALUE, 1, 1, 1));
    }

    @Test
    void aPerCacheBudgetAboveItsPoolIsRejected() {
        Budgets pool = new Budgets(100, 200, 10, 1000);
        new Budgets(100, 50, 10, 1).checkWithin(pool, "cache[a]");
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Budgets(100, 201, 10, 1).checkWithin(pool, "cache[a]"));
        assertEquals("cache[a].hostBytes: 201 (expected <= pool.hostBytes 200)", e.getMessage());
    }

    @Test
    void theLedgerChargesAllOrNothing() {
        BudgetLedger ledger = new BudgetLedger("pool", new Budgets(100, 100, 100, 100));
        ledger.charge(BudgetKind.DEVICE, 60);
        var e = assertThrows(BudgetExceededException.class, () -> ledger.charge(BudgetKind.DEVICE, 41));
        assertEquals(41, e.requestedBytes());
        assertEquals(60, e.usedBytes());
        assertEquals(100, e.budgetBytes());
        assertEquals(60, ledger.usedBytes(BudgetKind.DEVICE));
        ledger.release(BudgetKind.DEVICE, 60);
        assertThrows(IllegalStateException.class, () -> ledger.release(BudgetKind.DEVICE, 1));
        assertEquals(0, ledger.usedBytes(BudgetKind.DEVICE));
    }
}
