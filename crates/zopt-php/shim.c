/* The only C in zopt-php: PHP's zend_try / zend_catch are setjmp-based macros, which Rust
 * cannot express. Each function runs one engine call that may bail out (a fatal error
 * longjmps to the innermost zend_try) and reports the bailout instead, so that the Rust
 * caller can restore what it changed and re-raise it from a frame that owns nothing.
 * Besides: the delayed early binding loop of a hit (whose classes PHP links need those
 * guards) and glibc's malloc_trim, which has no Rust binding here. */
#include "php.h"
#include "Zend/zend_compile.h"
#include "Zend/zend_inheritance.h"
#include "Zend/zend_observer.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef zend_op_array *(*zopt_compile_file_t)(zend_file_handle *, int);

zend_op_array *zopt_guarded_compile_file(
	zopt_compile_file_t compile, zend_file_handle *handle, int type, bool *bailed_out)
{
	zend_op_array *op_array = NULL;
	*bailed_out = false;
	zend_try {
		op_array = compile(handle, type);
	} zend_catch {
		*bailed_out = true;
	} zend_end_try();
	return op_array;
}

__attribute__((hot)) zend_class_entry *zopt_guarded_try_early_bind(
	zend_class_entry *ce, zend_class_entry *parent_ce, zend_string *lcname, zval *delayed,
	bool *bailed_out)
{
	zend_class_entry *result = NULL;
	*bailed_out = false;
	zend_try {
		result = zend_try_early_bind(ce, parent_ce, lcname, delayed);
	} zend_catch {
		*bailed_out = true;
	} zend_end_try();
	return result;
}

/* A ZEND_DECLARE_CLASS_DELAYED of a cached main op_array (load.rs's EarlyBinding). */
typedef struct {
	zend_string *lcname;
	zend_string *rtd_key;
	zend_string *lc_parent;
	uint32_t cache_slot; /* (uint32_t) -1: none */
	uint32_t reserved;
} zopt_early_binding;

/* A key of the segment or of PHP has its hash set; any other is hashed. */
static zend_always_inline zval *zopt_find(HashTable *ht, zend_string *key)
{
	return zend_hash_find_ex(ht, key, ZSTR_H(key) != 0);
}

/* zopt's zend_inheritance_cache_get (inherit.rs). */
extern zend_class_entry *zopt_inheritance_cache_get(
	zend_class_entry *ce, zend_class_entry *parent, zend_class_entry **traits_and_interfaces);

/* What zend_try_early_bind does when the inheritance cache holds `ce` linked to `parent`
 * (its common case on a hit: the class was linked by an earlier request), for a delayed
 * early binding whose name `lcname` the class table does not hold: the rtd_key bucket
 * `delayed` takes the name and the linked class. Nothing on this path can bail out (the
 * cache lookup is zopt's own, which raises nothing, and the name is known free), so it runs
 * without zend_try's setjmp. NULL, having changed nothing, when PHP's own path is needed:
 * a class or user parent that is not immutable, another inheritance cache, a class linked
 * by nobody yet, a preloaded class, or an observer of linked classes. */
static zend_always_inline zend_class_entry *zopt_cached_early_bind(
	zend_class_entry *ce, zend_class_entry *parent, zend_string *lcname, zval *delayed)
{
	if (!(ce->ce_flags & ZEND_ACC_IMMUTABLE)
			|| (parent->type == ZEND_USER_CLASS && !(parent->ce_flags & ZEND_ACC_IMMUTABLE))
			|| zend_inheritance_cache_get != zopt_inheritance_cache_get
			|| !zend_inheritance_cache_add
			|| zend_observer_class_linked_observed) {
		return NULL;
	}
	zend_class_entry *linked = zopt_inheritance_cache_get(ce, parent, NULL);
	if (!linked || (linked->ce_flags & ZEND_ACC_PRELOADED)) {
		return NULL;
	}
	if (!zend_hash_set_bucket_key(EG(class_table), (Bucket *) delayed, lcname)) {
		return NULL;
	}
	Z_CE_P(delayed) = linked;
	return linked;
}

/* zend_accel_do_delayed_early_binding: binds each of the `n` delayed early bindings of
 * `filename` whose class is not declared yet and whose parent is, with
 * CG(compiled_filename) set to `filename` for the errors linking may raise, and puts each
 * class bound in its op's slot of `run_time_cache` (the main op_array's; NULL for none).
 * A class the inheritance cache holds linked is bound without zend_try
 * (zopt_cached_early_bind); only one that PHP links (or that may raise an error) goes
 * through zend_try_early_bind inside zend_try (a setjmp, some thirty instructions).
 * `*n_bound` counts the classes bound here (a class declared already, or one whose parent is
 * missing, is not). Returns false when PHP bailed out, after restoring the compiler globals. */
__attribute__((hot)) bool zopt_do_delayed_early_binding(
	zend_string *filename, const zopt_early_binding *bindings, size_t n, void *run_time_cache,
	size_t *n_bound)
{
	zend_string *orig_filename = CG(compiled_filename);
	bool orig_in_compilation = CG(in_compilation);
	bool ok = true;
	size_t bound = 0;
	CG(compiled_filename) = filename;
	CG(in_compilation) = 1;
	for (size_t i = 0; i < n; i++) {
		const zopt_early_binding *b = &bindings[i];
		if (zopt_find(EG(class_table), b->lcname)) {
			continue;
		}
		zval *zv = zopt_find(EG(class_table), b->rtd_key);
		if (!zv) {
			continue;
		}
		zval *parent = zopt_find(EG(class_table), b->lc_parent);
		if (!parent) {
			continue;
		}
		zend_class_entry *ce = zopt_cached_early_bind(Z_CE_P(zv), Z_CE_P(parent), b->lcname, zv);
		if (!ce) {
			bool bailed_out;
			ce = zopt_guarded_try_early_bind(Z_CE_P(zv), Z_CE_P(parent), b->lcname, zv, &bailed_out);
			if (bailed_out) {
				ok = false;
				break;
			}
		}
		if (!ce) {
			continue;
		}
		bound++;
		if (run_time_cache && b->cache_slot != (uint32_t) -1) {
			*(void **) ((char *) run_time_cache + b->cache_slot) = ce;
		}
	}
	CG(compiled_filename) = orig_filename;
	CG(in_compilation) = orig_in_compilation;
	*n_bound = bound;
	return ok;
}

/* zopt_compile_file(): `filename` compiled as an include (through zend_compile_file, so
 * through zopt's cache, which stores it or binds its cached form) without running it, as
 * opcache_compile_file() does. A fatal error while compiling is reported as a warning and
 * makes it return false; the op_array is released unexecuted. */
bool zopt_compile_without_execution(const char *filename)
{
	zend_file_handle handle;
	/* volatile: assigned inside zend_try, read after a possible longjmp */
	zend_op_array *volatile op_array = NULL;
	zend_execute_data *caller = EG(current_execute_data);
	uint32_t options = CG(compiler_options);

	zend_stream_init_filename(&handle, filename);
	CG(compiler_options) |= ZEND_COMPILE_WITHOUT_EXECUTION;
	zend_try {
		op_array = zend_compile_file(&handle, ZEND_INCLUDE);
	} zend_catch {
		EG(current_execute_data) = caller;
		zend_error(E_WARNING, "zopt could not compile file %s", filename);
	} zend_end_try();
	CG(compiler_options) = options;
	if (op_array != NULL) {
		destroy_op_array(op_array);
		efree(op_array);
	}
	zend_destroy_file_handle(&handle);
	return op_array != NULL;
}

/* Gives the free memory of the C heap back to the system (glibc's malloc_trim): what
 * zopt's optimizer and persist allocated while compiling a request's scripts is free
 * once they are stored, but glibc keeps it mapped (a few MB after a large application's
 * first request) where anything allocated later sits above it. */
__attribute__((hot)) void zopt_release_free_heap(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* Drops this process's page table entries for pages it touched while compiling and storing
 * but does not need for serving hits, so that they stop counting in its resident set:
 * the shared-memory segment [seg, seg + len) (a MAP_SHARED anonymous mapping: its contents
 * stay in the shared object, and a later access maps the same page again), and the
 * read-only, never written file-backed segments of this library (its code and read-only
 * data: a later access maps them again from the page cache). Writable segments (data,
 * bss, RELRO, which hold private relocated or changed pages) are left alone. */
__attribute__((hot)) static int zopt_drop_library_pages(struct dl_phdr_info *info, size_t size, void *self)
{
	(void) size;
	uintptr_t addr = (uintptr_t) self;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= start && addr < start + ph->p_memsz) {
			mine = 1;
		}
	}
	if (!mine) {
		return 0;
	}
	long page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) {
			continue;
		}
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t) (page - 1);
		/* Only whole pages of the file's mapping (p_filesz): a page past it is anonymous. */
		uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_filesz) & ~(uintptr_t) (page - 1);
		if (end > start) {
			madvise((void *) start, end - start, MADV_DONTNEED);
		}
	}
	return 1;
}

__attribute__((hot)) void zopt_release_mapped_pages(void *seg, size_t len)
{
	if (seg && len) {
		madvise(seg, len, MADV_DONTNEED);
	}
	dl_iterate_phdr(zopt_drop_library_pages, (void *) zopt_drop_library_pages);
}

/* The monotonic clock in nanoseconds, for the sampled timing of the compile hook (std's
 * Instant lies in the library's cold code, which a hit would then map). */
__attribute__((hot)) uint64_t zopt_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* A script's source revalidated on a hit: true and its modification time and size when
 * `path` (NUL-terminated) names a regular file. */
__attribute__((hot)) bool zopt_stat_mtime_size(
	const char *path, int64_t *mtime_sec, uint32_t *mtime_nsec, uint64_t *size)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		return false;
	}
	*mtime_sec = (int64_t) st.st_mtim.tv_sec;
	*mtime_nsec = (uint32_t) st.st_mtim.tv_nsec;
	*size = (uint64_t) st.st_size;
	return true;
}

