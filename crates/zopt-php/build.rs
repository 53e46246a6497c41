//! Generates Rust bindings for the PHP 8.2 structures and functions the extension uses.
//!
//! The include directories come from `php-config --includes` (`$PHP_CONFIG` names another
//! php-config), falling back to the Debian layout under /usr/include/php/20220829. Only this
//! crate needs the PHP headers.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const FALLBACK_ROOT: &str = "/usr/include/php/20220829";

fn include_dirs() -> Vec<PathBuf> {
    let php_config = env::var("PHP_CONFIG").unwrap_or_else(|_| "php-config".to_string());
    if let Ok(out) = Command::new(&php_config).arg("--includes").output() {
        if out.status.success() {
            let dirs: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .filter_map(|arg| arg.strip_prefix("-I"))
                .map(PathBuf::from)
                .collect();
            if !dirs.is_empty() {
                return dirs;
            }
        }
    }
    ["", "main", "Zend", "TSRM", "ext"]
        .iter()
        .map(|sub| Path::new(FALLBACK_ROOT).join(sub))
        .collect()
}

fn main() {
    // Keeps the functions of a shared-memory hit (`#[link_section = ".text.hot.zopt"]`)
    // together in an output section of their own, as GNU ld's default script does: lld
    // (rustc's default linker) otherwise spreads them over the library's code.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,keep-text-section-prefix");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PHP_CONFIG");

    let dirs = include_dirs();
    let Some(root) = dirs.iter().find(|d| d.join("main/php.h").is_file()) else {
        panic!(
            "\n\nzopt-php: the PHP 8.2 development headers were not found (no main/php.h under {}).\n\
             Install them with `apt-get install php8.2-dev libclang-dev`, or point PHP_CONFIG \
             at the php-config of a PHP 8.2 build.\n\n",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    for header in ["Zend/Optimizer/zend_optimizer.h", "ext/standard/info.h"] {
        if !root.join(header).is_file() {
            panic!(
                "\n\nzopt-php: {} is missing under {}; the PHP 8.2 headers look incomplete \
                 (install php8.2-dev).\n\n",
                header,
                root.display()
            );
        }
    }

    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_args(dirs.iter().map(|d| format!("-I{}", d.display())))
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .layout_tests(false)
        .derive_default(true)
        .derive_debug(false)
        .generate_comments(false)
        .prepend_enum_name(false);
    for ty in [
        "zend_script",
        "zend_op_array",
        "zend_function",
        "zend_op",
        "zend_class_entry",
        "zend_class_name",
        "zend_property_info",
        "zend_class_constant",
        "zend_attribute",
        "zend_attribute_arg",
        "zend_arg_info",
        "zend_type",
        "zend_type_list",
        "zend_ast",
        "zend_ast_zval",
        "zend_ast_list",
        "zend_ast_ref",
        "zend_ast_kind",
        "zend_string",
        "zend_array",
        "Bucket",
        "zval",
        "zend_live_range",
        "zend_try_catch_element",
        "zend_trait_alias",
        "zend_trait_precedence",
        "zend_trait_method_reference",
        "zend_execute_data",
        "zend_object",
        "zend_module_entry",
        "zend_ini_entry_def",
        "zend_ini_entry",
        "zend_refcounted",
        "zend_file_handle",
        "zend_stream_type",
        "zend_compiler_globals",
        "zend_executor_globals",
        "zend_property_info",
        "zend_constant",
        // The shared-memory cache: immutable classes and the inheritance cache.
        "zend_inheritance_cache_entry",
        "zend_class_dependency",
        "zend_internal_function",
        "zend_class_iterator_funcs",
        "zend_class_arrayaccess_funcs",
        "zend_error_info",
    ] {
        builder = builder.allowlist_type(ty);
    }
    for func in [
        "zend_optimizer_register_pass",
        "zend_optimizer_unregister_pass",
        "zend_register_ini_entries_ex",
        "zend_unregister_ini_entries_ex",
        "zend_ini_string_ex",
        "zend_error",
        "zend_error_at",
        "zend_free_recorded_errors",
        "php_info_print_table_start",
        "php_info_print_table_row",
        "php_info_print_table_end",
        "display_ini_entries",
        // Write-back: allocating and releasing engine values as the compiler does.
        "_emalloc",
        "_efree",
        "_zend_new_array",
        "zend_hash_index_update",
        "zend_hash_update",
        "zend_hash_find",
        "rc_dtor_func",
        "zend_vm_set_opcode_handler",
        "zend_vm_set_opcode_handler_ex",
        "zend_ini_long",
        // Cache mode: building scripts without the compiler, and binding them.
        "zend_stream_open",
        "zend_initialize_class_data",
        "zend_declare_typed_property",
        "zend_declare_class_constant_ex",
        "zend_add_magic_method",
        "zend_add_attribute",
        "zend_set_function_arg_flags",
        "zend_is_auto_global_str",
        "zend_register_long_constant",
        "zend_mangle_property_name",
        "_zend_hash_init",
        "zend_hash_add",
        "zend_hash_destroy",
        "zend_hash_str_exists",
        "zend_hash_exists",
        "_zend_bailout",
        "zend_message_dispatcher",
        "zend_map_ptr_extend",
        "zend_lookup_class_ex",
        "sapi_get_request_time",
        "execute_ex",
    ] {
        builder = builder.allowlist_function(func);
    }
    builder = builder.allowlist_var(
        "zend_empty_array|zend_new_interned_string|zend_string_init_interned|zend_compile_file|zend_execute_ex|zend_stream_open_function|zend_resolve_path|compiler_globals|executor_globals|sapi_module|PHP_VERSION|\
         zend_inheritance_cache_get|zend_inheritance_cache_add|module_registry|zend_post_startup_cb",
    );
    builder = builder.allowlist_var(
        "ZEND_MODULE_API_NO|ZEND_DEBUG|ZEND_ACC_.*|ZEND_LIVE_.*|HASH_FLAG_.*|ZEND_LAST_CATCH|\
         E_WARNING|E_NOTICE|E_CORE_WARNING|E_ERROR|CONST_.*|ZMSG_.*|ZEND_REQUIRE|E_COMPILE_ERROR|IS_.*|ZEND_COMPILE_.*|ZEND_FETCH_CLASS_.*|ZEND_INTERNAL_FUNCTION|ZEND_INTERNAL_CLASS|ZEND_HANDLE_.*|ZEND_INI_.*|ZEND_USER_CLASS|MODULE_PERSISTENT|_ZEND_TYPE_.*",
    );

    let bindings = builder.generate().unwrap_or_else(|err| {
        panic!(
            "\n\nzopt-php: bindgen could not read the PHP headers under {}: {err}\n\
             (is libclang-dev installed?)\n\n",
            root.display()
        )
    });
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("php.rs");
    bindings
        .write_to_file(&out)
        .unwrap_or_else(|err| panic!("zopt-php: writing {}: {err}", out.display()));

    // shim.c: the zend_try / zend_catch guards (setjmp macros Rust cannot express).
    println!("cargo:rerun-if-changed=shim.c");
    let mut cc = cc::Build::new();
    cc.file("shim.c").warnings(true).extra_warnings(true);
    for dir in &dirs {
        cc.include(dir);
    }
    cc.compile("zopt_shim");
}
