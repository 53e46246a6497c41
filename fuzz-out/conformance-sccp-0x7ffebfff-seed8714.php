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
        return 0;
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

function f2(): bool
{
    $l0 = [((false ? 10 : PHP_INT_MIN)) % 1000 => '1000'];
    $l1 = '';
    $copy4 = $l0;
    $copy4[] = $l1;
    echo count($l0), ' ', count($copy4), "\n";
    return false;
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


echo var_export([$v0, $v1, $v2, $v3, $v4, $v5, $v6, $v7, $v8, $v9, $v10], true), "\n";
echo var_export([$o0, $o1, K0::$count], true), "\n";
