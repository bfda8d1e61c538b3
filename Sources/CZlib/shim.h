#ifndef COURIER_CZLIB_SHIM_H
#define COURIER_CZLIB_SHIM_H
#include <zlib.h>
#endif
