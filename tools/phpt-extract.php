<?php
// phpt-extract.php SRC_ROOT OUT_DIR DIR...: writes the code of each test (its --FILE-- or
// --FILEEOF-- section) of php-src's .phpt files under SRC_ROOT/DIR to OUT_DIR/DIR/NAME.php,
// with the test's other sections in NAME.meta.json, and copies the files the tests include
// (everything in those directories that is not a .phpt), so each test runs from its
// directory as run-tests.php would run it.
if ($argc < 4) {
    fwrite(STDERR, "usage: php phpt-extract.php SRC_ROOT OUT_DIR DIR...\n");
    exit(2);
}
[, $root, $out] = $argv;
$extracted = 0;
$without_code = 0;
foreach (array_slice($argv, 3) as $dir) {
    if (!is_dir("$root/$dir")) {
        fwrite(STDERR, "phpt-extract: no directory $root/$dir\n");
        exit(1);
    }
    $files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator("$root/$dir", FilesystemIterator::SKIP_DOTS));
    foreach ($files as $file) {
        $path = $file->getPathname();
        $rel = substr($path, strlen($root) + 1);
        @mkdir(dirname("$out/$rel"), 0777, true);
        if (!str_ends_with($path, '.phpt')) {
            copy($path, "$out/$rel");
            continue;
        }
        $parts = preg_split('/^--([A-Z_]+)--\r?\n/m', file_get_contents($path), -1, PREG_SPLIT_DELIM_CAPTURE);
        $sections = [];
        for ($i = 1; $i + 1 < count($parts); $i += 2) {
            $sections[$parts[$i]] = $parts[$i + 1];
        }
        if (isset($sections['FILE'])) {
            // run-tests.php drops the newline that ends the section.
            $code = preg_replace('/\r?\n$/', '', $sections['FILE']) . "\n";
        } elseif (isset($sections['FILEEOF'])) {
            $code = $sections['FILEEOF'];
        } else {
            $without_code++;
            continue;
        }
        $base = substr("$out/$rel", 0, -strlen('.phpt'));
        file_put_contents("$base.php", $code);
        unset($sections['FILE'], $sections['FILEEOF']);
        file_put_contents("$base.meta.json", json_encode($sections, JSON_INVALID_UTF8_SUBSTITUTE));
        $extracted++;
    }
}
echo "$extracted tests extracted into $out ($without_code without code of their own)\n";
