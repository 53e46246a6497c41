//! PHP-compatible dumps (zend_dump.c).
