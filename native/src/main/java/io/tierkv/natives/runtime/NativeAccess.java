package io.tierkv.natives.runtime;

/**
 * Whether this module may call native code, and the flag that enables it, for messages.
 *
 * <p>Stateless and thread-safe.
 */
public final class NativeAccess {

    private NativeAccess() {}

    /**
     * Whether {@code --enable-native-access} covers this module (the module path) or the class
     * path ({@code ALL-UNNAMED}).
     *
     * @return true if native calls are allowed without warnings
     */
    public static boolean isEnabled() {
        return NativeAccess.class.getModule().isNativeAccessEnabled();
    }

    /**
     * The flag to add to the java command line, for this module's situation.
     *
     * @return {@code "--enable-native-access=ALL-UNNAMED"} on the class path, else
     *     {@code "--enable-native-access=io.tierkv.natives"}
     */
    public static String flag() {
        Module m = NativeAccess.class.getModule();
        return "--enable-native-access=" + (m.isNamed() ? m.getName() : "ALL-UNNAMED");
    }

    /**
     * A sentence saying native access is off and how to turn it on.
     *
     * @return the explanation, naming the flag
     */
    public static String disabledReason() {
        return "native access is not enabled for " + NativeAccess.class.getModule()
                + ": start the JVM with " + flag();
    }
}
