package dev.mooring.java;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Bounded polling for asynchronous outcomes (the bound only keeps a broken build from hanging). */
final class Await {
    private Await() {
    }

    static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("gave up waiting until " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    static <T> void until(String what, Supplier<T> state, java.util.function.Predicate<T> condition) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        T last = state.get();
        while (!condition.test(last)) {
            if (System.nanoTime() > deadline) {
                fail("gave up waiting until " + what + "; last state: " + last);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            last = state.get();
        }
    }
}
