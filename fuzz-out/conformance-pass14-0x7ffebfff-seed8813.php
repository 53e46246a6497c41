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
        return 0;
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


echo var_export([$v0, $v1, $v2, $v3, $v4, $v5, $v6, $v7, $v8, $v9, $v10], true), "\n";
echo var_export([$o0, $o1, K0::$count], true), "\n";
exit(0);
