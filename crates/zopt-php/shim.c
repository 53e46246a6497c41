/* The only C in zopt-php: PHP's zend_try / zend_catch are setjmp-based macros, which Rust
 * cannot express. Each function runs one engine call that may bail out (a fatal error
 * longjmps to the innermost zend_try) and reports the bailout instead, so that the Rust
 * caller can restore what it changed and re-raise it from a frame that owns nothing. */
#include "php.h"
#include "Zend/zend_compile.h"
#include "Zend/zend_inheritance.h"

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

zend_class_entry *zopt_guarded_try_early_bind(
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
