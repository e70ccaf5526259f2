package dev.mooring.java;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.lang.reflect.GenericArrayType;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The facade's Java-visible API (every public class of dev.mooring.java, found on the class
 * path, and their public and protected members) must not expose Kotlin function types,
 * continuations (suspend functions) or Companion objects.
 */
class JavaFacadeSignatureTest {
    private static final String PACKAGE = "dev/mooring/java/";

    private static List<Class<?>> facadeClasses() throws IOException, URISyntaxException, ClassNotFoundException {
        URL location = MongoClusters.class.getProtectionDomain().getCodeSource().getLocation();
        Path root = Path.of(location.toURI());
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(root)) {
            Path dir = root.resolve(PACKAGE);
            try (Stream<Path> files = Files.list(dir)) {
                files.filter(p -> p.toString().endsWith(".class"))
                        .forEach(p -> names.add(PACKAGE + p.getFileName().toString()));
            }
        } else {
            try (JarFile jar = new JarFile(root.toFile())) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    String n = entries.nextElement().getName();
                    if (n.startsWith(PACKAGE) && n.endsWith(".class") && n.indexOf('/', PACKAGE.length()) < 0) names.add(n);
                }
            }
        }
        List<Class<?>> classes = new ArrayList<>();
        for (String n : names) {
            Class<?> c = Class.forName(n.substring(0, n.length() - ".class".length()).replace('/', '.'));
            if (Modifier.isPublic(c.getModifiers())) classes.add(c);
        }
        return classes;
    }

    private static void checkType(Type t, String where, List<String> problems) {
        if (t instanceof Class<?>) {
            Class<?> c = (Class<?>) t;
            while (c.isArray()) c = c.getComponentType();
            String n = c.getName();
            if (n.startsWith("kotlin.jvm.functions.") || n.equals("kotlin.coroutines.Continuation")
                    || n.startsWith("kotlin.coroutines.") || n.startsWith("kotlinx.coroutines.") || n.endsWith("$Companion")
                    || n.equals("kotlin.Unit") || n.equals("kotlin.time.Duration")) {
                problems.add(where + " uses " + n);
            }
        } else if (t instanceof ParameterizedType) {
            ParameterizedType p = (ParameterizedType) t;
            checkType(p.getRawType(), where, problems);
            for (Type a : p.getActualTypeArguments()) checkType(a, where, problems);
        } else if (t instanceof WildcardType) {
            for (Type b : ((WildcardType) t).getUpperBounds()) checkType(b, where, problems);
            for (Type b : ((WildcardType) t).getLowerBounds()) checkType(b, where, problems);
        } else if (t instanceof GenericArrayType) {
            checkType(((GenericArrayType) t).getGenericComponentType(), where, problems);
        } else if (t instanceof TypeVariable<?>) {
            for (Type b : ((TypeVariable<?>) t).getBounds()) checkType(b, where, problems);
        }
    }

    private static void checkExecutable(Executable e, String where, List<String> problems) {
        for (Type p : e.getGenericParameterTypes()) checkType(p, where, problems);
        if (e instanceof Method) checkType(((Method) e).getGenericReturnType(), where, problems);
        if (e.getName().contains("-")) problems.add(where + " has a mangled name (inline-class signature)");
        if (e.getName().contains("$")) problems.add(where + " is a Kotlin internal member visible to Java");
    }

    @Test
    void theJavaVisibleApiHasNoKotlinFunctionTypesContinuationsOrCompanions() throws Exception {
        List<Class<?>> classes = facadeClasses();
        List<String> names = classes.stream().map(Class::getSimpleName).sorted().collect(Collectors.toList());
        assertTrue(names.containsAll(List.of("MongoClusters", "JavaMongoCluster", "JavaConnection", "ClusterSettingsBuilder",
                "ConnectionPoolListener", "ServerMonitorListener", "ServerListener", "ClusterListener", "CommandListener", "ListenerRegistration")), names.toString());
        List<String> problems = new ArrayList<>();
        for (Class<?> c : classes) {
            if (c.getSimpleName().equals("Companion") || c.getName().contains("$")) problems.add("public nested class " + c.getName());
            for (Field f : c.getFields()) {
                if (f.getName().equals("Companion")) problems.add(c.getName() + ".Companion");
                checkType(f.getGenericType(), c.getName() + "." + f.getName(), problems);
            }
            for (Method m : c.getMethods()) {
                // Synthetic members (accessors, @JvmSynthetic internals) cannot be called from Java source.
                if (m.getDeclaringClass() == Object.class || m.isSynthetic()) continue;
                checkExecutable(m, c.getName() + "." + m.getName(), problems);
            }
            for (Constructor<?> k : c.getConstructors()) {
                if (!k.isSynthetic()) checkExecutable(k, c.getName() + ".<init>", problems);
            }
            for (Class<?> nested : c.getClasses()) problems.add("public nested class " + nested.getName());
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void entryPointsAreStaticAndListenerMethodsHaveDefaults() throws Exception {
        for (Method m : MongoClusters.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic()) assertTrue(Modifier.isStatic(m.getModifiers()), m.toString());
        }
        for (Class<?> listener : List.of(ConnectionPoolListener.class, ServerMonitorListener.class, ServerListener.class, ClusterListener.class, CommandListener.class)) {
            for (Method m : listener.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic()) assertTrue(m.isDefault(), m + " must be a default (no-op) method");
            }
        }
    }
}
