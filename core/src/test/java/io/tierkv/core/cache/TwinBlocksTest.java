package io.tierkv.core.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link TwinBlocks} against a map of lists, with few distinct hashes so that many ids share one,
 * and two identities under each hash (a collision), of which {@code takeCopyOf} takes only the
 * asked-for block's.
 */
class TwinBlocksTest {

    private static final int IDS = 2_000;

    @Test
    void holdsSeveralBlocksPerHashThroughGrowthAndRemoval() {
        long[] hi = new long[IDS];
        long[] lo = new long[IDS];
        SplittableRandom random = new SplittableRandom(7);
        for (int id = 0; id < IDS; id++) {
            int h = random.nextInt(37); // 37 hashes over 2,000 ids: long runs of one hash
            hi[id] = h * 0x9E3779B97F4A7C15L;
            lo[id] = h;
        }
        Arena arena = Arena.ofConfined();
        IdentityTable identities = new IdentityTable(arena, IDS, 4);
        for (int id = 0; id < IDS; id++) {
            identities.setKey(id, random.nextInt(2), 0, 0, 0); // two identities per hash: collisions
        }
        TwinBlocks twins = new TwinBlocks(hi, lo);
        Map<Integer, List<Integer>> model = new HashMap<>();
        boolean[] in = new boolean[IDS];
        for (int step = 0; step < 200_000; step++) {
            int id = random.nextInt(IDS);
            int op = random.nextInt(3);
            if (op == 0 && !in[id]) {
                twins.add(id);
                in[id] = true;
                model.computeIfAbsent(key(lo, identities, id), k -> new ArrayList<>()).add(id);
            } else if (op == 1) {
                assertEquals(in[id], twins.remove(id), "remove " + id + " at step " + step);
                if (in[id]) {
                    in[id] = false;
                    model.get(key(lo, identities, id)).remove(Integer.valueOf(id));
                }
            } else {
                int taken = twins.takeCopyOf(id, identities);
                List<Integer> held = model.getOrDefault(key(lo, identities, id), List.of());
                if (held.isEmpty()) {
                    assertEquals(-1, taken, "take of an absent identity at step " + step);
                } else {
                    assertTrue(held.contains(taken), "took " + taken + ", held " + held + " at step " + step);
                    held.remove(Integer.valueOf(taken));
                    in[taken] = false;
                }
            }
            assertEquals(in[id], twins.contains(id), "contains " + id + " at step " + step);
        }
        int expected = 0;
        for (boolean b : in) {
            expected += b ? 1 : 0;
        }
        assertEquals(expected, twins.size());
        for (int id = 0; id < IDS; id++) {
            assertEquals(in[id], twins.contains(id), "contains " + id + " at the end");
        }
        assertFalse(expected == 0, "the run left some held");
        arena.close();
    }

    /** The model's key: the hash (its low word here) and the identity's context word. */
    private static int key(long[] lo, IdentityTable identities, int id) {
        for (int other = 0; other < IDS; other++) {
            if (lo[other] == lo[id] && identities.same(other, id)) {
                return (int) lo[id] * IDS + other; // the first id of the same hash and identity
            }
        }
        throw new AssertionError("unreachable: id " + id + " is its own match");
    }
}
