/* The PHP 8.2 headers zopt-php reads through bindgen (see build.rs). */
#include "php.h"
#include "main/SAPI.h"
#include "Zend/zend_compile.h"
#include "Zend/zend_ini.h"
#include "Zend/zend_attributes.h"
#include "Zend/zend_vm.h"
#include "Zend/zend_inheritance.h"
#include "Zend/zend_constants.h"
#include "Zend/zend_stream.h"
#include "Zend/Optimizer/zend_optimizer.h"
#include "ext/standard/info.h"

#ifdef ZTS
#error "zopt-php supports NTS (non thread-safe) PHP builds only"
#endif
#if ZEND_MODULE_API_NO != 20220829
#error "zopt-php needs the PHP 8.2 headers (ZEND_MODULE_API_NO 20220829)"
#endif
