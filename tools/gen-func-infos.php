<?php
// Regenerates crates/zend-inference/src/func_infos_table.rs: for every internal function of
// this PHP binary (run it with `php -n`, as the conformance oracle runs), the return info
// PHP's optimizer knows: zend_func_infos.h's entry (F0/F1/FN, RC bits added as
// zend_func_info.c does) and the return type from the function's arginfo
// (zend_get_return_info_from_signature_only).
//
//   php -n -d zend_extension=opcache tools/gen-func-infos.php /opt/phpsrc/php-8.2.32/Zend/Optimizer/zend_func_infos.h \
//       [/usr/include/php/20220829/main/php_config.h] > crates/zend-inference/src/func_infos_table.rs
$hdr = file_get_contents($argv[1]);
$bits = [
    'MAY_BE_UNDEF' => 1 << 0, 'MAY_BE_NULL' => 1 << 1, 'MAY_BE_FALSE' => 1 << 2, 'MAY_BE_TRUE' => 1 << 3,
    'MAY_BE_BOOL' => (1 << 2) | (1 << 3),
    'MAY_BE_LONG' => 1 << 4, 'MAY_BE_DOUBLE' => 1 << 5, 'MAY_BE_STRING' => 1 << 6, 'MAY_BE_ARRAY' => 1 << 7,
    'MAY_BE_OBJECT' => 1 << 8, 'MAY_BE_RESOURCE' => 1 << 9, 'MAY_BE_ANY' => 0x3fe, 'MAY_BE_REF' => 1 << 10,
    'MAY_BE_ARRAY_PACKED' => 1 << 21, 'MAY_BE_ARRAY_NUMERIC_HASH' => 1 << 22, 'MAY_BE_ARRAY_STRING_HASH' => 1 << 23,
    'MAY_BE_ARRAY_EMPTY' => 1 << 29,
    'MAY_BE_ARRAY_KEY_LONG' => (1 << 21) | (1 << 22), 'MAY_BE_ARRAY_KEY_STRING' => 1 << 23,
    'MAY_BE_ARRAY_KEY_ANY' => (1 << 21) | (1 << 22) | (1 << 23) | (1 << 29),
    'MAY_BE_RC1' => 1 << 30, 'MAY_BE_RCN' => 1 << 31,
];
foreach (['NULL' => 1, 'FALSE' => 2, 'TRUE' => 3, 'LONG' => 4, 'DOUBLE' => 5, 'STRING' => 6, 'ARRAY' => 7, 'OBJECT' => 8, 'RESOURCE' => 9, 'REF' => 10] as $n => $b) {
    $bits["MAY_BE_ARRAY_OF_$n"] = 1 << ($b + 10);
}
$bits['MAY_BE_ARRAY_OF_ANY'] = 0x3fe << 10;
function mask(string $expr, array $bits): int {
    $m = 0;
    foreach (explode('|', $expr) as $t) {
        $t = trim($t);
        if ($t === '' || $t === '0') continue;
        if (!isset($bits[$t])) { fwrite(STDERR, "unknown $t\n"); continue; }
        $m |= $bits[$t];
    }
    return $m;
}
// zend_func_infos.h puts some entries under `#if`: the binary has them only when the
// condition holds where Zend/Optimizer/zend_func_info.c is compiled, which sees php_config.h
// and nothing of the extensions' own headers (HAVE_DNS_SEARCH_FUNC is defined in
// ext/standard/dns.c, HAVE_EVP_PKEY_EC in ext/openssl, crypto_* in libsodium's headers: their
// entries are absent from the binary and its calls get the arginfo type, as
// crates/zopt/tests/internal_functions.rs checks against the binary).
$config = file_get_contents($argv[2] ?? '/usr/include/php/20220829/main/php_config.h');
preg_match_all('/^#define\s+(\w+)(?:\s+(\S+))?/m', $config, $dd, PREG_SET_ORDER);
$defined = [];
foreach ($dd as $d) $defined[$d[1]] = $d[2] ?? '1';
function holds(string $cond, array $defined): bool {
    $cond = preg_replace_callback('/defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)/', fn($m) => isset($defined[$m[1] ?: $m[2]]) ? ' true ' : ' false ', $cond);
    $cond = preg_replace_callback('/\b(?!true\b|false\b)([A-Za-z_]\w*)\b/', fn($m) => isset($defined[$m[1]]) && $defined[$m[1]] !== '0' ? ' true ' : ' false ', $cond);
    if (!preg_match('/^[\s()!&|a-z]*$/', $cond)) { fwrite(STDERR, "cannot evaluate #if $cond\n"); exit(1); }
    return eval("return $cond;");
}
$kept = '';
$stack = [];
foreach (explode("\n", $hdr) as $line) {
    if (preg_match('/^#\s*(if|ifdef|ifndef|elif|else|endif)\b\s*(.*)$/', $line, $pp)) {
        $c = trim(preg_replace('#/\*.*?\*/#', '', $pp[2]));
        switch ($pp[1]) {
            case 'if': $stack[] = holds($c, $defined); break;
            case 'ifdef': $stack[] = isset($defined[$c]); break;
            case 'ifndef': $stack[] = !isset($defined[$c]); break;
            case 'elif': fwrite(STDERR, "#elif not handled\n"); exit(1);
            case 'else': $stack[] = !array_pop($stack); break;
            case 'endif': array_pop($stack); break;
        }
        continue;
    }
    if (!in_array(false, $stack, true)) $kept .= $line . "\n";
}
$hdr = $kept;
$infos = [];
preg_match_all('/\b(F0|F1|FN|FC)\("([^"]+)",\s*([^)]*)\)/', $hdr, $mm, PREG_SET_ORDER);
foreach ($mm as [$all, $kind, $name, $expr]) {
    if ($kind === 'FC') continue;
    $m = mask($expr, $bits);
    if ($kind === 'F1') $m |= $bits['MAY_BE_RC1'];
    if ($kind === 'FN') $m |= $bits['MAY_BE_RC1'] | $bits['MAY_BE_RCN'];
    $infos[strtolower($name)] = $m;
}
function type_mask(?ReflectionType $t, array $bits, ?string &$class): ?int {
    $class = null;
    if ($t === null) return null;
    $types = $t instanceof ReflectionUnionType ? $t->getTypes() : [$t];
    $m = 0; $names = 0;
    foreach ($types as $x) {
        $n = $x->getName();
        switch ($n) {
            case 'null': $m |= 2; break;
            case 'false': $m |= 4; break;
            case 'true': $m |= 8; break;
            case 'bool': $m |= 12; break;
            case 'int': $m |= 16; break;
            case 'float': $m |= 32; break;
            case 'string': $m |= 64; break;
            case 'array': $m |= 128 | $bits['MAY_BE_ARRAY_KEY_ANY'] | $bits['MAY_BE_ARRAY_OF_ANY'] | $bits['MAY_BE_ARRAY_OF_REF']; break;
            case 'object': $m |= 256; break;
            case 'mixed': $m |= 0x3fe | $bits['MAY_BE_ARRAY_KEY_ANY'] | $bits['MAY_BE_ARRAY_OF_ANY'] | $bits['MAY_BE_ARRAY_OF_REF']; break;
            case 'void': $m |= 2; break;
            case 'never': break;
            case 'callable': $m |= 64 | 256 | 128 | $bits['MAY_BE_ARRAY_KEY_ANY'] | $bits['MAY_BE_ARRAY_OF_ANY'] | $bits['MAY_BE_ARRAY_OF_REF']; break;
            case 'iterable': $m |= 256 | 128 | $bits['MAY_BE_ARRAY_KEY_ANY'] | $bits['MAY_BE_ARRAY_OF_ANY'] | $bits['MAY_BE_ARRAY_OF_REF']; break;
            case 'static': $m |= 256; break;
            default: $m |= 256; $names++; $class = $n; break;
        }
        if ($x->allowsNull() && $n !== 'mixed' && $n !== 'null') $m |= 2;
    }
    if ($names !== 1 || count($types) > 1 && $names > 1) $class = $names === 1 ? $class : null;
    if ($m & (64 | 128 | 256 | 512)) $m |= $bits['MAY_BE_RC1'] | $bits['MAY_BE_RCN'];
    return $m;
}
echo "// Generated by tools/gen-func-infos.php from zend_func_infos.h and the PHP 8.2 binary's arginfo.\n";
echo "// Do not edit.\n\n";
echo "/// (lowercase name, zend_func_infos.h info, signature return mask or u32::MAX for none, class)\n";
echo "pub(crate) static TABLE: &[(&str, u32, u32, &str)] = &[\n";
$rows = [];
$funcs = get_defined_functions()['internal'];
$funcs = array_map("strtolower", $funcs);
usort($funcs, "strcmp");
foreach ($funcs as $f) {
    $rf = new ReflectionFunction($f);
    $class = null;
    $sig = type_mask($rf->hasReturnType() ? $rf->getReturnType() : ($rf->hasTentativeReturnType() ? $rf->getTentativeReturnType() : null), $bits, $class);
    if ($rf->returnsReference()) { $sig = ($sig ?? (0x3fe | $bits['MAY_BE_ARRAY_KEY_ANY'] | $bits['MAY_BE_ARRAY_OF_ANY'] | $bits['MAY_BE_ARRAY_OF_REF'] | $bits['MAY_BE_RC1'] | $bits['MAY_BE_RCN'])) | $bits['MAY_BE_REF']; $class = null; }
    $rows[$f] = sprintf("    (\"%s\", 0x%x, 0x%x, \"%s\"),\n", $f, $infos[$f] ?? 0, $sig ?? 0xffffffff, $class ?? '');
}
// Methods of internal classes (static calls resolve to them): "class::method".
$methods = [];
$tentative = [];
foreach (get_declared_classes() as $c) {
    $rc = new ReflectionClass($c);
    if (!$rc->isInternal()) continue;
    foreach ($rc->getMethods() as $m) {
        $class = null;
        $t = $m->hasReturnType() ? $m->getReturnType() : ($m->hasTentativeReturnType() ? $m->getTentativeReturnType() : null);
        $sig = type_mask($t, $bits, $class);
        if ($t instanceof ReflectionNamedType && $t->getName() === 'static') $class = null;
        if ($class === 'self') $class = $m->getDeclaringClass()->getName();
        if ($m->returnsReference()) { $sig = ($sig ?? (0x3fe | $bits['MAY_BE_ARRAY_KEY_ANY'] | $bits['MAY_BE_ARRAY_OF_ANY'] | $bits['MAY_BE_ARRAY_OF_REF'] | $bits['MAY_BE_RC1'] | $bits['MAY_BE_RCN'])) | $bits['MAY_BE_REF']; $class = null; }
        $methods[strtolower($c) . '::' . strtolower($m->getName())] = [$sig ?? 0xffffffff, $class ?? ''];
        if (!$m->hasReturnType() && $m->hasTentativeReturnType()) {
            $tentative[] = strtolower($c) . '::' . strtolower($m->getName());
        }
    }
}
foreach ($methods as $k => [$sig, $class]) {
    $rows[$k] = sprintf("    (\"%s\", 0x0, 0x%x, \"%s\"),\n", addslashes($k), $sig, $class);
}
ksort($rows, SORT_STRING);
echo implode('', $rows);
echo "];\n";
// Methods whose return type is only tentative: PHP's optimizer uses it only for a call
// that cannot reach an override (`use_tentative_return_info`).
echo "\n/// (lowercase \"class::method\") of the internal methods whose return type is tentative, sorted.\n";
echo "pub(crate) static TENTATIVE: &[&str] = &[\n";
sort($tentative, SORT_STRING);
foreach ($tentative as $k) {
    printf("    \"%s\",\n", addslashes($k));
}
echo "];\n";
// zend_func_infos.h's entries for the functions of extensions this binary does not load
// (mbstring, mysqli, curl, ...): PHP's optimizer knows them by name in any process that
// loads the extension (crates/zend-ir's environment describes such a process).
echo "\n/// (lowercase name, zend_func_infos.h info) of the functions the binary does not have, sorted.\n";
echo "pub(crate) static HEADER_ONLY: &[(&str, u32)] = &[\n";
ksort($infos, SORT_STRING);
foreach ($infos as $f => $m) {
    if (!in_array($f, $funcs, true)) printf("    (\"%s\", 0x%x),\n", $f, $m);
}
echo "];\n";
// Ancestors (parents and interfaces, lowercased) of every internal class, for instanceof.
echo "\n/// (lowercase internal class, its lowercase parents and interfaces)\n";
echo "pub(crate) static CLASS_ANCESTORS: &[(&str, &[&str])] = &[\n";
$anc = [];
foreach (get_declared_classes() as $c) {
    $rc = new ReflectionClass($c);
    if (!$rc->isInternal()) continue;
    $a = array_map('strtolower', array_merge(array_values(class_parents($c)), array_values(class_implements($c))));
    sort($a, SORT_STRING);
    $anc[strtolower($c)] = $a;
}
foreach (get_declared_interfaces() as $c) {
    $rc = new ReflectionClass($c);
    if (!$rc->isInternal()) continue;
    $a = array_map('strtolower', array_values(class_implements($c)));
    sort($a, SORT_STRING);
    $anc[strtolower($c)] = $a;
}
ksort($anc, SORT_STRING);
foreach ($anc as $k => $a) {
    echo "    (\"" . addslashes($k) . "\", &[" . implode(', ', array_map(fn($x) => '"' . addslashes($x) . '"', $a)) . "]),\n";
}
echo "];\n";
// The parent of every internal class that has one (lowercased), for join_class_entries.
echo "\n/// (lowercase internal class, its parent as declared)\n";
echo "pub(crate) static CLASS_PARENTS: &[(&str, &str)] = &[\n";
$par = [];
foreach (get_declared_classes() as $c) {
    $rc = new ReflectionClass($c);
    if (!$rc->isInternal() || !$rc->getParentClass()) continue;
    $par[strtolower($c)] = $rc->getParentClass()->getName();
}
ksort($par, SORT_STRING);
foreach ($par as $k => $p) {
    echo "    (\"" . addslashes($k) . "\", \"" . addslashes($p) . "\"),\n";
}
echo "];\n";

