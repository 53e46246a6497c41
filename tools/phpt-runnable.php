<?php
// phpt-runnable.php [--extensions=A,B,...] DIR...: prints the PHP files tools/php-tests.sh extracted under each DIR
// whose test runs on its own and prints the same in every run, for `zopt exec-diff`: no
// command-line arguments, standard input, environment, request data or cleanup section, no
// extension but OPcache, no skip condition that needs more than PHP itself, and no call
// whose result depends on the process, the clock, randomness or OPcache's own state
// (compared between PHP without OPcache and each mode, such output differs by itself).
// --extensions also keeps the tests that need only the extensions listed (for exec-diff's
// `--php-ini default`, under which Debian's extensions are loaded).
$args = array_slice($argv, 1);
$extensions = ['opcache'];
if ($args && str_starts_with($args[0], '--extensions=')) {
    $listed = strtolower(substr(array_shift($args), strlen('--extensions=')));
    $extensions = array_merge($extensions, array_filter(array_map('trim', explode(',', $listed))));
}
if (!$args) {
    fwrite(STDERR, "usage: php phpt-runnable.php [--extensions=A,B,...] DIR...\n");
    exit(2);
}
const PROCESS_DEPENDENT = '/opcache_|ini_get|ini_set\s*\(\s*.opcache|memory_get|getrusage|hrtime'
    . '|microtime|spl_object_hash|spl_object_id|debug_zval_refcount|gc_status|php_uname|getmypid'
    . '|rand\s*\(|random_|Randomizer|uniqid|time\s*\(|date\s*\(|gettimeofday|sleep\s*\('
    . '|new DateTime(Immutable)?\s*\(\s*\)|date_create(_immutable)?\s*\(\s*\)'
    . '|tempnam|sys_get_temp_dir|phpinfo/';
const NEEDS_MORE = '/function_exists|getenv|PHP_OS|PHP_INT_SIZE != 8|valgrind'
    . '|memory_limit|ZEND_DEBUG|zend_test|opcache_get_status|jit/i';
const SECTIONS = ['ARGS', 'STDIN', 'ENV', 'CGI', 'GET', 'POST', 'COOKIE', 'CONFLICTS', 'XFAIL', 'CLEAN'];
$found = [];
foreach ($args as $dir) {
    if (!is_dir($dir)) {
        fwrite(STDERR, "phpt-runnable: no directory $dir\n");
        exit(1);
    }
    $files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS));
    foreach ($files as $file) {
        $meta_path = $file->getPathname();
        if (!str_ends_with($meta_path, '.meta.json')) {
            continue;
        }
        $meta = json_decode(file_get_contents($meta_path), true);
        $php = substr($meta_path, 0, -strlen('.meta.json')) . '.php';
        if (!is_array($meta) || !is_file($php)) {
            continue;
        }
        $needed = preg_split('/\s+/', strtolower(trim($meta['EXTENSIONS'] ?? '')), -1, PREG_SPLIT_NO_EMPTY);
        if (array_diff($needed, $extensions)) {
            continue;
        }
        // A skip condition naming an extension is about the ones listed, or it is not met.
        if (preg_match_all('/extension_loaded\s*\(\s*[\'"]([\w-]+)[\'"]/i', $meta['SKIPIF'] ?? '', $names)
            && array_diff(array_map('strtolower', $names[1]), $extensions)) {
            continue;
        }
        foreach (SECTIONS as $section) {
            if (isset($meta[$section])) {
                continue 2;
            }
        }
        if (preg_match(NEEDS_MORE, $meta['SKIPIF'] ?? '')
            || preg_match(PROCESS_DEPENDENT, file_get_contents($php))) {
            continue;
        }
        $found[] = $php;
    }
}
sort($found);
echo implode("\n", $found), $found ? "\n" : '';
