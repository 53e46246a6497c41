<?php
// zopt's PHP driver for loading whole libraries (see crates/zopt/src/bench.rs):
//
//   map OUT DIR...   writes OUT, a JSON map from each lowercased class name to its file, for
//                    the PHP files under DIRs with a namespace and a class, interface, trait or
//                    enum declaration (one declaration per file);
//   load MAP         loads every class of MAP through an autoloader and prints
//                    {"classes":N,"load_ns":T} (T: time spent loading, from hrtime);
//   digest [--skip DIR]... DIR...
//                    maps DIRs, loads every class (but those of the skipped directories) and
//                    prints a sorted digest of what PHP declared (names, modifiers, parents,
//                    interfaces, traits, methods with parameters and return types, constants,
//                    properties, attributes, doc comments, lines): two runs print the same
//                    digest exactly when PHP ended up with the same classes. A fatal error is
//                    named on stderr as `zopt-digest-fatal: FILE`.

function zopt_map(array $roots): array {
    $map = [];
    foreach ($roots as $root) {
        $files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($root, FilesystemIterator::SKIP_DOTS));
        foreach ($files as $f) {
            if ($f->getExtension() !== 'php') continue;
            $src = file_get_contents($f->getPathname());
            if (!preg_match('/^namespace\s+([^;]+);/m', $src, $ns)) continue;
            if (!preg_match('/^(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(\w+)/m', $src, $decl)) continue;
            $map[strtolower($ns[1] . '\\' . $decl[1])] = realpath($f->getPathname());
        }
    }
    ksort($map);
    return $map;
}

function zopt_autoload(array $map): void {
    spl_autoload_register(function ($c) use ($map) {
        $k = strtolower($c);
        if (isset($map[$k])) require_once $map[$k];
    });
}

function zopt_exists(string $c): bool {
    return class_exists($c) || interface_exists($c) || trait_exists($c);
}

function zopt_describe(ReflectionClass $r): string {
    $line = $r->getName() . " " . $r->getModifiers() . " parent=" . ($r->getParentClass() ? $r->getParentClass()->getName() : "-")
        . " implements=" . implode(",", $r->getInterfaceNames()) . " uses=" . implode(",", $r->getTraitNames());
    foreach ($r->getMethods() as $m) {
        $line .= " method:" . $m->class . "::" . $m->getName() . "/" . $m->getModifiers() . "/" . $m->getNumberOfParameters()
            . "/" . $m->getNumberOfRequiredParameters() . "/" . ($m->getReturnType() ?? "") . "/" . md5((string) $m->getDocComment())
            . "/" . $m->getStartLine() . "/" . count($m->getAttributes()) . "/" . count($m->getStaticVariables());
        foreach ($m->getParameters() as $p) {
            $line .= "," . $p->getName() . ":" . ($p->getType() ?? "") . ($p->isOptional() ? "?" : "") . ($p->isPassedByReference() ? "&" : "")
                . ($p->isVariadic() ? "..." : "") . "@" . count($p->getAttributes());
        }
    }
    foreach ($r->getReflectionConstants() as $k) {
        $line .= " const:" . $k->getName() . "/" . $k->getModifiers() . "/" . count($k->getAttributes());
    }
    foreach ($r->getProperties() as $p) {
        $line .= " prop:" . $p->getName() . "/" . $p->getModifiers() . "/" . ($p->getType() ?? "") . "/" . ($p->hasDefaultValue() ? "default" : "")
            . "/" . md5((string) $p->getDocComment()) . "/" . count($p->getAttributes());
    }
    return $line . " attributes=" . count($r->getAttributes()) . " doc=" . md5((string) $r->getDocComment())
        . " lines=" . $r->getStartLine() . "-" . $r->getEndLine() . " file=" . $r->getFileName();
}

switch ($argv[1] ?? '') {
    case 'map':
        file_put_contents($argv[2], json_encode(zopt_map(array_slice($argv, 3))));
        break;
    case 'load':
        $map = json_decode(file_get_contents($argv[2]), true);
        zopt_autoload($map);
        $n = 0;
        $t = hrtime(true);
        foreach (array_keys($map) as $c) {
            try {
                if (zopt_exists($c)) $n++;
            } catch (Throwable $e) {
            }
        }
        $t = hrtime(true) - $t;
        echo json_encode(['classes' => $n, 'load_ns' => $t]), "\n";
        break;
    case 'digest':
        $dirs = [];
        $skip = [];
        for ($args = array_slice($argv, 2), $i = 0; $i < count($args); $i++) {
            if ($args[$i] === '--skip') {
                $skip[] = rtrim($args[++$i], '/') . '/';
            } else {
                $dirs[] = $args[$i];
            }
        }
        $map = array_filter(zopt_map($dirs), function ($file) use ($skip) {
            foreach ($skip as $s) {
                if (str_starts_with($file, $s)) return false;
            }
            return true;
        });
        // A fatal error (a trait from outside DIRs, say) cannot be caught: name its file, so
        // that the caller can leave its directory out and run again.
        register_shutdown_function(function () {
            $e = error_get_last();
            if ($e !== null && ($e['type'] & (E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR))) {
                fwrite(STDERR, "zopt-digest-fatal: " . $e['file'] . "\n");
            }
        });
        zopt_autoload($map);
        $out = [];
        foreach (array_keys($map) as $c) {
            try {
                $out[] = zopt_exists($c) ? zopt_describe(new ReflectionClass($c)) : "missing $c";
            } catch (Throwable $e) {
                $out[] = "error $c: " . get_class($e) . ": " . $e->getMessage();
            }
        }
        sort($out);
        echo implode("\n", $out), "\n";
        break;
    default:
        fwrite(STDERR, "usage: map OUT DIR... | load MAP | digest DIR...\n");
        exit(2);
}
