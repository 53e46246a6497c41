<?php

set_error_handler(static function (int $no, string $msg): bool {
    echo "E$no: $msg\n";
    return true;
});

function step_ok(): bool
{
    static $steps = 0;
    return ++$steps <= 20000;
}

const C0 = (-2.5) * 2 + 2147483647 / 4;
const C1 = 2 < PHP_INT_MAX || PHP_INT_SIZE === 8;
class FuzzException extends \RuntimeException
{
}

interface I0
{
    const SIDES = 42;
    public function area(): float;
}

trait T0
{
    public string $label = 'PHP';

    public function describe(): string
    {
        return static::class . '/' . $this->label . '/' . $this->getName();
    }

    public static function kind(): string
    {
        return self::class . '<' . get_called_class();
    }
}

abstract class K0 implements I0
{
    use T0;

    public const C = 0x7f % 7 + PHP_INT_SIZE;
    public static int $count = 0;
    public static $bag = [1, 2];

    public function __construct(public readonly int $id, protected string $name = 'k')
    {
        static::$count = (static::$count + 1) & 0xffff;
    }

    public function m(int $x): int
    {
        if (C1) {
            try {
                echo var_export([C1, constant('C1'), defined('C1')], true), "\n";
                echo '#1 ', var_export(((['b' => (-0.0), 'a' => '12', true][0] ?? C0) <=> $x), true), "\n";
            } catch (\RuntimeException $ex2) {
                echo get_class($ex2), ' ', $ex2->getMessage(), ' ', $ex2->getCode(), "\n";
                echo var_export([C1, constant('C1'), defined('C1')], true), "\n";
            }
            $ref3 = &$x;
            $ref3 = (-2147483648);
            echo var_export($x, true), ' ', var_export($ref3, true), "\n";
            unset($ref3);
        } else {
            $x = ((fn(int $w): int => PHP_INT_MAX)(2147483647) << (255 & 63));
        }
        return intdiv(((int) ([8 => 3.0, 'a' => 1000, 10, null]['x'] ?? 0)), (count([]) & 255) | 1);
    }

    public static function make(int $id): static
    {
        return new static($id);
    }

    public function getName(): string
    {
        return $this->name;
    }

    public function area(): float
    {
        return PHP_INT_MIN;
    }
}

final class K1 extends K0
{
    public array $items = [];

    public function m(int $x): int
    {
        return (parent::m($x) ^ self::C) & 0xffffff;
    }

    public function add(mixed $v): static
    {
        if (count($this->items) < 16) {
            $this->items[] = $v;
        }
        return $this;
    }

    public function __toString(): string
    {
        return 'K1#' . $this->id;
    }
}

class K2 extends K0
{
    public function area(): float
    {
        return M_PI * $this->id ** 2;
    }
}

enum E0: string
{
    case H = '9';
    case S = 'a9';
    const WILD = self::S;

    public function color(): string
    {
        return match ($this) {
            self::H => 'Red',
            self::S => 'Black',
        };
    }

    public static function pick(string $c): self
    {
        return self::tryFrom($c) ?? self::WILD;
    }
}

enum E1
{
    case Up;
    case Down;
}

function thr0(int $x): int
{
    if ((is_numeric('9') && is_null($x))) {
        throw new \RuntimeException('thr0:' . $x, $x & 0xff);
    }
    return $x;
}

function f1(int $p0 = (-2147483648)): float
{
    if (!step_ok()) {
        return 9.2233720368547758E+18;
    }
    $l0 = PHP_FLOAT_EPSILON;
    $l1 = $l0;
    static $calls = 0;
    $calls++;
    $fn4 = fn(int $y): int => ((false ? $y : 10) % ((intdiv(0x7f, (PHP_INT_SIZE & 255) | 1) & 255) | 1));
    echo $fn4($p0), "\n";
    echo '#5 ', var_export(var_export([4 => true, '0' => '1'], true), true), "\n";
    try {
        echo var_export(intdiv(($p0 | $p0), $p0), true), "\n";
    } catch (\Throwable $t) {
        echo get_class($t), ': ', $t->getMessage(), "\n";
    }
    return $l0;
}

function va2($head = 0, ...$rest): string
{
    $out = var_export($head, true) . ':' . count($rest);
    foreach ($rest as $k => $v) {
        $out .= ',' . $k . '=' . var_export($v, true);
    }
    return $out . '/' . func_num_args() . '/' . count(func_get_args());
}

function f3(int $p0 = 017, array $p1 = [1000], int $p2 = PHP_INT_SIZE): string
{
    if (!step_ok()) {
        return '1e3';
    }
    $l0 = [C0, "a\nb", NAN, $p2];
    $l1 = floatval($p0);
    $l2 = 7;
    static $calls = 0;
    $calls++;
    global $v3;
    --$l2;
    $fn6 = fn(int $y): int => (fn(int $w): int => (0b101 & (-1)))(($p0 ^ $y));
    echo $fn6(((int) (0b101 - (-INF)))), "\n";
    return ((string) (f1(($calls <=> ([255, 4 => 0.0, '1e3']['k'] ?? $l1))) ?: "a\nb"));
}

// main
$v0 = PHP_INT_SIZE;
$v1 = 3;
$v2 = NAN;
$v3 = 1.0E+25;
$v4 = true;
$v5 = 'abc';
$v6 = '.5';
$v7 = PHP_INT_MAX;
$v8 = 3.0;
$v9 = ['a' => 255, PHP_INT_MAX, 'a' => INF, null];
$v10 = [];
$r0 = &$v6;
define('D0', 0);
define('D1', '12 ');
$o0 = new K1(0, 'o0');
$o1 = K2::make(1);
$on = true ? $o0 : null;

if (isset($v9['0']) && is_int($v9['0'])) {
    echo 'int elem', "\n";
}
$v4 = !$v4;
echo '#7 ', var_export((C1 ? var_export($v10, true) : ''), true), "\n";
try {
    $o0->id = D0;
} catch (\Error $err) {
    echo get_class($err), ': ', $err->getMessage(), "\n";
}
echo '#8 ', var_export(array_key_last($v10), true), "\n";
$copy9 = $v10;
$copy9[] = $v2;
echo count($v10), ' ', count($copy9), "\n";
try {
    try {
        echo var_export(array_shift($v10), true), "\n";
        echo '#10 ', var_export((true > f3()), true), "\n";
        if ($v4) {
            throw new \RuntimeException((E1::Up->name));
        }
    } catch (\RuntimeException $ex11) {
        echo get_class($ex11), ' ', $ex11->getMessage(), ' ', $ex11->getCode(), "\n";
    } finally {
        echo "finally\n";
    }
    $ref12 = &$v2;
    $ref12 = floatval($v4);
    echo var_export($v2, true), ' ', var_export($ref12, true), "\n";
    unset($ref12);
    if ($v4) {
        throw new FuzzException((true . D1));
    }
} catch (\RuntimeException $ex13) {
    echo get_class($ex13), ' ', $ex13->getMessage(), ' ', $ex13->getCode(), "\n";
    $v9[0] = ($v8 ?? (-($v0)));
}
if (count($v9) < 32) {
    array_unshift($v9, E0::tryFrom(' 12')?->value);
}
if (strlen($v6) < 200) { $v6 .= (($v1 !== $r0) ? D1 : substr($v5, $v0, $v1)); };
if (!function_exists('rf15')) {
    function &rf15(array &$a): array
    {
        $a['r'] = [1, 2];
        return $a['r'];
    }
}
$x14 = [array_search(null, [])];
$x14r = &rf15($x14);
$x14r[] = 'changed';
echo var_export([$x14, \end(rf15($x14)), (function () {
    return isset($this);
})()], true), "\n";
$ref16 = &$v1;
$ref16 = ((int) (D0 + (-INF)));
echo var_export($v1, true), ' ', var_export($ref16, true), "\n";
unset($ref16);
echo '#17 ', var_export($v8, true), "\n";
$v4 = ((['k' => false, 4 => $v5, 'b' => D0][''] ?? array_search('1000', [8 => '0', '' => 2147483647, 4 => 9.2233720368547758E+18, 'INF'])) >= !va2(($v9['a'] ?? $v0), ($v0 ?? $v2)));
echo '#18 ', var_export((($o0 instanceof I0) xor (('' == null))), true), "\n";
try {
    echo var_export(intdiv(($r0 <=> D1), $v1), true), "\n";
} catch (\Throwable $t) {
    echo get_class($t), ': ', $t->getMessage(), "\n";
}
echo '#19 ', var_export(intdiv(((int) (1 - $v2)), (($v5 <=> 'PHP') & 255) | 1), true), "\n";
$v0 %= ((((~$v1) % (($v1 & 255) | 1))) & 255) | 1;

echo var_export([$v0, $v1, $v2, $v3, $v4, $v5, $v6, $v7, $v8, $v9, $v10], true), "\n";
echo var_export([$o0, $o1, K0::$count], true), "\n";
exit(0);
