//! `zopt-progen SEED [COUNT]`: print the generated program of SEED (or, with COUNT, write
//! COUNT programs from SEED on as files `SEED.php` into the current directory).

use zopt_progen::{generate, Config};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(seed) = args.first().and_then(|s| s.parse::<u64>().ok()) else {
        eprintln!("usage: zopt-progen SEED [COUNT]");
        std::process::exit(2);
    };
    let config = Config::default();
    match args.get(1).and_then(|s| s.parse::<u64>().ok()) {
        None => print!("{}", generate(seed, &config).source()),
        Some(count) => {
            for s in seed..seed + count {
                let path = format!("{s}.php");
                if let Err(e) = std::fs::write(&path, generate(s, &config).source()) {
                    eprintln!("zopt-progen: cannot write {path}: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
}
