//! Type and range inference (zend_inference.c).
