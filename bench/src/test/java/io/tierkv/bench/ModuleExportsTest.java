package io.tierkv.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.StoreStats;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.TierStats;
import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReader;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * TierKV's module boundaries as the module system enforces them (issue 13): the disk tier's
 * internals and the store SPI are exported only to the modules that need them, the public disk
 * package holds only what a user configures and reads back, and no public signature of an
 * exported package names a type its users cannot see. Runs on the module path (surefire patches
 * these tests into {@code io.tierkv.bench}); the first test fails if it does not, so none of these
 * can pass on the class path, where every package is open to everyone.
 *
 * <p>What the unnamed module sees is not asserted: surefire's forked JVM gets
 * {@code --add-exports M/pkg=ALL-UNNAMED} for each package another module exports to the module
 * under test alone (here {@code io.tierkv.core.spi} and {@code io.tierkv.tiers.disk.store}); a
 * user's JVM has no such flag. The module descriptors and the exports to other named modules are
 * what these tests check.
 */
class ModuleExportsTest {

    private static final String DISK = "io.tierkv.tiers.disk";
    private static final String STORE = "io.tierkv.tiers.disk.store";
    private static final String SPI = "io.tierkv.core.spi";

    private static Module module(String name) {
        return ModuleLayer.boot().findModule(name)
                .orElseThrow(() -> new AssertionError(name + " is not in the boot layer: not on the module path?"));
    }

    private static Module bench() {
        return ModuleExportsTest.class.getModule();
    }

    private static Set<String> targets(Module m, String pkg) {
        return m.getDescriptor().exports().stream().filter(e -> e.source().equals(pkg)).findFirst()
                .map(ModuleDescriptor.Exports::targets).orElseThrow(() -> new AssertionError(m + " exports no " + pkg));
    }

    @Test
    void theseTestsRunInTheBenchModuleOnTheModulePath() {
        assertTrue(bench().isNamed(), "ModuleExportsTest runs in the unnamed module: the tests are on the class path");
        assertEquals("io.tierkv.bench", bench().getName());
        assertEquals("io.tierkv.tiers", KvBlockManager.class.getModule().getName());
        assertTrue(bench().canRead(module("io.tierkv.tiers")));
    }

    @Test
    void theDiskStoreIsExportedToTheBenchModuleAlone() {
        Module tiers = module("io.tierkv.tiers");
        assertTrue(tiers.getPackages().contains(STORE));
        assertFalse(tiers.isExported(STORE), STORE + " must not be exported to every module");
        assertTrue(tiers.isExported(STORE, bench()), STORE + " is exported to io.tierkv.bench");
        assertFalse(tiers.isExported(STORE, module("io.tierkv.observe")));
        assertEquals(Set.of("io.tierkv.bench"), targets(tiers, STORE));
    }

    @Test
    void theStoreSpiIsExportedOnlyToTheModulesThatImplementOrWireAStore() {
        Module core = module("io.tierkv.core");
        assertFalse(core.isExported(SPI), SPI + " must not be exported to every module");
        assertTrue(core.isExported(SPI, bench()));
        assertTrue(core.isExported(SPI, module("io.tierkv.tiers")));
        assertTrue(core.isExported(SPI, module("io.tierkv.remote")));
        assertFalse(core.isExported(SPI, module("io.tierkv.observe")));
        assertEquals(Set.of("io.tierkv.tiers", "io.tierkv.remote", "io.tierkv.bench"), targets(core, SPI));
        // the store's counters are part of TierStats, so they live in an exported package
        assertTrue(core.isExported(StoreStats.class.getPackageName()));
        assertEquals(StoreStats.class, TierStats.RemoteTierStats.class.getRecordComponents()[1].getType());
    }

    @Test
    void thePublicDiskPackageHoldsOnlyWhatAUserConfiguresAndReadsBack() throws IOException {
        Module tiers = module("io.tierkv.tiers");
        assertTrue(tiers.isExported(DISK));
        assertEquals(Set.of(), targets(tiers, DISK), DISK + " is exported to everyone, unqualified");
        assertEquals(Set.of("Compression", "DiskOptions", "DiskStats"), classesOf(tiers, DISK));
    }

    /**
     * Every public constructor, method, field and record component of the public types of every
     * package {@code core} and {@code tiers} export to everyone names only types of packages
     * exported to everyone (or the JDK's): a type its users cannot name does not leak through the
     * API, as {@code StoreStats} did through {@code TierStats}. The one exception is the remote
     * store's wiring, {@code KvBlockManagerBuilder.remote(BlockStoreFactory)}: a user passes a
     * {@code RemoteOptions} there without naming the SPI type.
     */
    @Test
    void theExportedApiNamesNoTypeOfAQualifiedOrHiddenPackage() throws Exception {
        Set<String> allowed = Set.of(
                "io.tierkv.tiers.KvBlockManagerBuilder.remote -> io.tierkv.core.spi.BlockStoreFactory");
        List<String> leaks = new ArrayList<>();
        for (String name : List.of("io.tierkv.core", "io.tierkv.tiers")) {
            Module m = module(name);
            for (String pkg : new TreeSet<>(m.getPackages())) {
                if (!m.isExported(pkg)) {
                    continue;
                }
                for (String simple : classesOf(m, pkg)) {
                    Class<?> c = Class.forName(pkg + "." + simple, false, m.getClassLoader());
                    if (Modifier.isPublic(c.getModifiers())) {
                        leaks.addAll(leaksOf(c));
                    }
                }
            }
        }
        leaks.removeAll(allowed);
        assertEquals(List.of(), leaks);
    }

    private static List<String> leaksOf(Class<?> c) {
        List<String> out = new ArrayList<>();
        List<Executable> members = new ArrayList<>(List.of(c.getConstructors()));
        members.addAll(List.of(c.getMethods()));
        for (Executable e : members) {
            if (e.getDeclaringClass() != c) {
                continue;
            }
            List<Class<?>> types = new ArrayList<>(List.of(e.getParameterTypes()));
            if (e instanceof Method method) {
                types.add(method.getReturnType());
            }
            for (Class<?> t : types) {
                if (hidden(t)) {
                    out.add(c.getName() + "." + (e instanceof Method ? e.getName() : "<init>") + " -> " + t.getName());
                }
            }
        }
        Stream.of(c.getFields()).filter(f -> f.getDeclaringClass() == c && hidden(f.getType()))
                .forEach(f -> out.add(c.getName() + "." + f.getName() + " -> " + f.getType().getName()));
        if (c.isRecord()) {
            for (RecordComponent rc : c.getRecordComponents()) {
                if (hidden(rc.getType())) {
                    out.add(c.getName() + "." + rc.getName() + " -> " + rc.getType().getName());
                }
            }
        }
        for (Class<?> nested : c.getClasses()) {
            out.addAll(leaksOf(nested));
        }
        return out;
    }

    /** Whether a type is one a module that reads its module may not name (its package is not exported to all). */
    private static boolean hidden(Class<?> t) {
        while (t.isArray()) {
            t = t.getComponentType();
        }
        return !t.isPrimitive() && !t.getModule().isExported(t.getPackageName());
    }

    /** The top-level classes of a package of a module, by simple name (package-info excluded). */
    private static Set<String> classesOf(Module m, String pkg) throws IOException {
        String dir = pkg.replace('.', '/') + "/";
        try (ModuleReader reader = ModuleLayer.boot().configuration().findModule(m.getName()).orElseThrow()
                .reference().open(); Stream<String> names = reader.list()) {
            return names.filter(n -> n.startsWith(dir) && n.endsWith(".class"))
                    .map(n -> n.substring(dir.length(), n.length() - ".class".length()))
                    .filter(n -> !n.contains("/") && !n.contains("$") && !n.equals("package-info"))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }
}
