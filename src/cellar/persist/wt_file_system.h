// persist/wt_file_system.h: WiredTiger's files through a cellar::env (cellar/env.h).
//
// WiredTiger takes a custom file system (WT_FILE_SYSTEM) only from an extension it loads
// at the start of wiredtiger_open (WT_CONNECTION::set_file_system). cellar's extension is
// the function `cellar_wt_file_system_init`, which WiredTiger looks up in the program
// itself ("local" extension, dlsym): a program that links cellar must export that one
// symbol, which Meson's cellar_dep does (-Wl,--export-dynamic-symbol=...). A program
// that does not is refused with a clear error when it passes its own env; with the
// default env it gets WiredTiger's built-in POSIX file system, which does the same calls.
// The same extension registers the block compressors (persist/wt_compressors.h) with the
// default env too; a program without it can read only uncompressed tables.
//
// The file system implements what WiredTiger needs of a POSIX one: directory listing,
// exists, open (create, exclusive, read-only, durable creation), remove and rename (with
// directory syncs when asked to be durable), size; per file: read (a short read is an
// error, as WiredTiger's own), write (all of it), size, sync, sync without waiting,
// truncate, lock, close. Memory mapping, preallocation and fadvise are left out (all
// optional): WiredTiger then reads with pread.
//
// Thread safety: wt_open may be called from any thread; the file system serves
// WiredTiger's threads concurrently (the env must allow it, as cellar/env.h says).
#pragma once

#include <wiredtiger.h>

#include <memory>
#include <string>

#include "cellar/env.h"
#include "cellar/status.h"

namespace cellar::detail {

// wiredtiger_open(home, handler, config) with `e` as the file system of the connection.
// Errors: the WiredTiger return code (0 on success); `*message` says why when the
// extension could not be used.
int wt_open(const std::string& home, WT_EVENT_HANDLER* handler, const std::string& config,
            const std::shared_ptr<env>& e, WT_CONNECTION** conn, std::string* message);

// Whether this program exports the extension, so that compressed tables can be written
// and read.
bool wt_compression_available();

}  // namespace cellar::detail
