<?php
declare(strict_types=1);

set_error_handler(static function (int $no, string $msg): bool {
    echo "E$no: $msg\n";
    return true;
});

function step_ok(): bool
{
    static $steps = 0;
    return ++$steps <= 20000;
}

class FuzzException extends \RuntimeException
{
}

interface I0
{
    const SIDES = 0;
    public function area(): float;
}

trait T0
{
    public string $label = '9';

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

    public const C = 0b101 | (3 << 2);
    public static int $count = 0;
    public static $bag = [1, 2];

    public function __construct(public readonly int $id, protected string $name = 'k')
    {
        static::$count = (static::$count + 1) & 0xffff;
    }

    public function m(int $x): int
    {
        $t1 = self::C;
        echo var_export([isset($t1), empty($t1), $t1 ?? 'dflt'], true), "\n";
        unset($t1);
        echo var_export([isset($t1), empty($t1), $t1 ?? 'gone', $undefined ?? 'undef'], true), "\n";
        return match (((2147483647 | PHP_INT_SIZE)) & 3) { 0 => ((int) ([]['0'] ?? 0)), 1, 2 => $x, default => 4611686018427387904 };
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
        return (-(self::C));
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
    case H = "a\nb";
    case S = '1';
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

function gen0(int $n): \Generator
{
    for ($i = 0; $i < ($n & 7); $i++) {
        $got = yield '12 ';
        if ($got !== null) {
            echo 'got ', var_export($got, true), "\n";
        }
    }
    yield from [3, 'a' => true, 2 => null];
    return implode(',', ['123abc', 4 => '12 ', 'a' => null]);
}

function byref1(array &$a, float &$x): int
{
    if (count($a) > 24) {
        $a = array_slice($a, 0, 24);
    }
    switch ('123abc') {
        case '1000':
            break;
        default:
            if (false) {
                foreach (array_filter(['b' => 'abc', 'x' => 1, 'x' => (-2.5)]) as $e0) {
                    if (false) {
                        continue;
                    }
                    $e0 = ((int) (abs(($x * 0.0)) + $x));
                    if (is_string($e0) && strlen($e0) > 64) {
                        $e0 = substr($e0, 0, 64);
                    }
                }
                $x = (floor(-0.5));
            } else {
                $a += [($a[4] ?? null), 2147483647, $x];
                $gen3 = gen0((true ? 1_000 : (-2147483648)));
                if ($gen3->valid()) {
                    echo var_export($gen3->current(), true), "\n";
                    echo var_export($gen3->send(null), true), "\n";
                }
                echo count(iterator_to_array(gen0(3), false)), "\n";
            }
    }
    return count($a);
}

function f2(): bool
{
    $l0 = [((false ? 10 : PHP_INT_MIN)) % 1000 => '1000'];
    $l1 = '1000';
    $copy4 = $l0;
    $copy4[] = $l1;
    echo count($l0), ' ', count($copy4), "\n";
    return is_bool($l1);
}

function va3($head = 0, ...$rest): string
{
    $out = var_export($head, true) . ':' . count($rest);
    foreach ($rest as $k => $v) {
        $out .= ',' . $k . '=' . var_export($v, true);
    }
    return $out . '/' . func_num_args() . '/' . count(func_get_args());
}

function f4(bool $p0 = false, $p1 = '1.5'): float
{
    echo '#5 ', var_export('zz', true), "\n";
    return (1.5 / (max(((int) (0.0 + 255)), PHP_INT_MIN) ?: 1));
}

function f5(bool $p0 = true, array $p1 = [2 => PHP_INT_MIN]): string
{
    if (!step_ok()) {
        return ' 12';
    }
    static $calls = 0;
    $calls++;
    $calls = f4($p0, p1: ' 12');
    return "[{$calls}|{$p0}]";
}

function f6(int $p0): array
{
    if (!step_ok()) {
        return ['0' => 0.0, 9.2233720368547758E+18];
    }
    $l0 = $p0;
    $l1 = round(NAN, 2);
    $l2 = (false || false);
    static $calls = 0;
    $calls++;
    if (!((int) ($calls - $calls))) {
        $l2 = $l2;
        $i0 = 0;
        while ($i0 < 3 && step_ok()) {
            $i0++;
            if ($l2) {
                if (true) {
                    return [(['' => '-12.5e-1'][0] ?? $p0), ...array_diff_key([2, 0.0], [null, 4 => null, 'k' => 0.0])];
                }
            } elseif (in_array($calls, [((0 % (($p0 & 255) | 1))) % 1000 => true, ((fn(int $w): int => $p0)($p0)) % 1000 => $calls, 'b' => $p0, 'x' => true], true)) {
                $t6 = $calls;
                echo var_export([isset($t6), empty($t6), $t6 ?? 'dflt'], true), "\n";
                unset($t6);
                echo var_export([isset($t6), empty($t6), $t6 ?? 'gone', $undefined ?? 'undef'], true), "\n";
                echo '#7 ', var_export(str_starts_with(((string) (null ?: '1000')), match ('INF') { '1000', '' => ' 12', default => '0' }), true), "\n";
            }
            $calls = ($p0 + f4(true, p1: (false and ((-0.0) > $l1))));
        }
    }
    return [];
}

// main
$v0 = 0x7f;
$v1 = 42;
$v2 = 0.1;
$v3 = 42;
$v4 = false;
$v5 = ' ';
$v6 = ' 12';
$v7 = null;
$v8 = 255;
$v9 = [];
$v10 = ['12' => 0, '12' => 7];
$r0 = &$v0;
$o0 = new K1(3, 'o0');
$o1 = K2::make(PHP_INT_SIZE);
$on = true ? $o0 : null;

$v10 += iterator_to_array(gen0(PHP_INT_MAX), false);
try {
    $v6 = substr(str_repeat(substr(va3(f5(($v4 >= array_key_first($v10)), f6((-1)))), (10 % (($v1 & 255) | 1)), ((int) ($v2 - $v0))), $r0 & 3), 0, 48);
    try {
        echo '#8 ', var_export(iterator_to_array(gen0((ord('A'))), false), true), "\n";
        if (!function_exists('cf10')) {
            function cf10(int $x): int
            {
                return ($x & 0xffff) * 3;
            }
        }
        echo cf10(2147483647), "\n";
    } catch (FuzzException | \LogicException $ex11) {
        echo 'fuzz ', $ex11->getMessage(), "\n";
    } catch (\RuntimeException $ex11) {
        echo get_class($ex11), ' ', $ex11->getMessage(), ' ', $ex11->getCode(), "\n";
        echo '#12 ', var_export(intdiv((false ? $v1 : $r0), ($v0 & 255) | 1), true), "\n";
    }
} catch (\RuntimeException $ex13) {
    echo get_class($ex13), ' ', $ex13->getMessage(), ' ', $ex13->getCode(), "\n";
}
if (array_key_exists(($v0) % 1000, [0.0, false])) {
    try {
        $o0->id = ($on?->id ?? -1);
    } catch (\Error $err) {
        echo get_class($err), ': ', $err->getMessage(), "\n";
    }
    foreach (array_diff_key($v10, $v10) as $k0 => $e0) {
        echo var_export(('f6')(0x7f), true), "\n";
        try {
            $x14 = [[1, $v1], 'k' => [2, 3]];
            $x14[0][1] += 3;
            $x14y = $x14[0][0]++;
            unset($x14['k'][0]);
            $x14[substr((serialize([1, 'a' => true])), 0, 2) . 'x'] ??= 5;
            echo var_export([$x14, $x14y], true), "\n";
            asort($v9);
            $ref15 = &$v3;
            $ref15 = abs($v3);
            echo var_export($v3, true), ' ', var_export($ref15, true), "\n";
            unset($ref15);
        } catch (\RuntimeException $ex16) {
            echo get_class($ex16), ' ', $ex16->getMessage(), ' ', $ex16->getCode(), "\n";
        } finally {
            echo "finally\n";
        }
    }
    K0::$count += 1;
    K0::$count++;
    ++K0::$count;
    --K0::$count;
    echo K0::$count, ' ', var_export(isset(K0::$count), true), ' ', $o0::C, ' ', $o0::kind(), "\n";
}
$ref18 = &$v7;
$ref18 = abs($v2);
echo var_export($v7, true), ' ', var_export($ref18, true), "\n";
unset($ref18);
echo '#19 ', var_export(PHP_INT_SIZE, true), "\n";
$v7 = E0::tryFrom($v5)?->value;
if (is_string($v7) && strlen($v7) > 64) {
    $v7 = substr($v7, 0, 64);
}
$ref20 = &$v8;
$ref20 = f2();
echo var_export($v8, true), ' ', var_export($ref20, true), "\n";
unset($ref20);
echo var_export(match ($v5) {
    '' => ($nosuch ?? $v0),
    '00' => $v5,
    default => ($nosuch ?? $v8),
}, true), "\n";
if ($v4) {
    echo '#21 ', var_export(($r0 & min(4611686018427387904, (-1))), true), "\n";
    foreach ((array_pad([], 2, null)) as $e0) {
        $v5 = substr(match (va3(E0::tryFrom("[{$v6}|{$v8}]")?->value, $v8)) { 'PHP' => (f2() ? match ('PHP') { '0', "a\nb" => $v6, default => $v6 } : (NAN . $v5)), default => $v6 }, 0, 48);
        foreach (gen0($r0) as $gk => $gv22) {
            echo var_export($gk, true), '=', var_export($gv22, true), "\n";
        }
        try {
            echo '#24 ', var_export((($v0 == $e0) + $v3--), true), "\n";
            echo byref1($v10, $v2), ' ', var_export($v2, true), "\n";
            if (is_bool(true)) {
                break;
            }
        } catch (\RuntimeException $ex25) {
            echo get_class($ex25), ' ', $ex25->getMessage(), ' ', $ex25->getCode(), "\n";
        } finally {
            echo "finally\n";
            $gen27 = gen0(($r0 % ((4611686018427387904 & 255) | 1)));
            foreach ($gen27 as $gv26) {
                echo var_export($gv26, true), "\n";
            }
            echo var_export($gen27->getReturn(), true), "\n";
        }
    }
}
echo '#28 ', var_export($v1, true), "\n";
echo var_export([defined('C0'), defined('D0'), PHP_INT_SIZE, M_PI], true), "\n";

echo var_export([$v0, $v1, $v2, $v3, $v4, $v5, $v6, $v7, $v8, $v9, $v10], true), "\n";
echo var_export([$o0, $o1, K0::$count], true), "\n";
