# vigil: one Makefile, the layout is the architecture (see docs/architecture.md).
#   make            build/bin/vigil-cc, build/bin/vigil, build/lib/libvigil.{a,so}
#   make test       every test (tests/run.sh), ends with "N passed, N failed"
#   make install PREFIX=/usr/local
PREFIX      ?= /usr/local
LLVM_CONFIG ?= $(shell command -v llvm-config-14 2>/dev/null || command -v llvm-config 2>/dev/null)
HOSTCC      ?= clang
B           := build

WARN    := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS  ?= -O2 -g
BASE    := -std=gnu11 $(WARN) -I. -Icommon -Iinclude -D_GNU_SOURCE

LLVM_CFLAGS := $(shell $(LLVM_CONFIG) --cflags)
LLVM_LIBS   := $(shell $(LLVM_CONFIG) --ldflags) $(shell $(LLVM_CONFIG) --libs --link-shared 2>/dev/null || $(LLVM_CONFIG) --libs) -Wl,-rpath,$(shell $(LLVM_CONFIG) --libdir)

# A tool is a folder tools/<name>/ (docs/architecture.md, "Adding a tool"): its runtime/,
# cmd/ and compiler/ parts join libvigil, the vigil command and vigil-cc; each registers
# itself through a retained linker section, so nothing here names a tool.
TOOLS        := $(notdir $(patsubst %/,%,$(wildcard tools/*/)))
TOOL_RT_SRC  := $(wildcard tools/*/runtime/*.c)
TOOL_CMD_SRC := $(wildcard tools/*/cmd/*.c)
TOOL_CC_SRC  := $(wildcard tools/*/compiler/*.c)
TOOL_HEADERS := $(wildcard tools/*/include/vigil/*.h)

COMMON_SRC   := $(wildcard common/*.c)
COMPILER_SRC := $(wildcard compiler/*.c) $(TOOL_CC_SRC)
# vigil-cc is two parts: the driver (command line, settings, the cache, running clang, the
# link), which does not link LLVM, so that a cache hit costs no libLLVM load; and the
# transforming part, a shared object in lib/ the driver loads on the first compile the cache
# does not answer (docs/cache.md).
DRIVER_SRC   := compiler/driver.c compiler/args.c compiler/cache.c compiler/link.c
XFORM_SRC    := $(filter-out $(DRIVER_SRC),$(COMPILER_SRC))
RUNTIME_SRC  := $(wildcard runtime/*.c) $(TOOL_RT_SRC)
CMD_SRC      := $(wildcard cmd/*.c) $(TOOL_CMD_SRC)

obj = $(patsubst %.c,$(B)/obj/$(1)/%.o,$(2))

COMMON_OBJ   := $(call obj,host,$(COMMON_SRC))
COMPILER_OBJ := $(call obj,host,$(COMPILER_SRC))
CMD_OBJ      := $(call obj,host,$(CMD_SRC))
# The runtime is position-independent (PIE executables, libvigil.so) and never instrumented.
# Its debug info is DWARF 4: Valgrind 3.19 gives up on a program that holds any DWARF 5, and
# users run vigil builds under Valgrind and cachegrind too.
# The shared formats go into an archive of their own, linked on demand: a program carries the
# runtime and every tool (linked whole: tools register themselves), but only the formats the
# runtime calls, not the readers and scorers that only the vigil command needs.
RT_OBJ       := $(call obj,rt,$(RUNTIME_SRC))
RT_COMMON_OBJ := $(call obj,rt,$(COMMON_SRC))
RT_FLAGS     := -fPIC -fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc -fno-builtin-free \
                -ftls-model=initial-exec -fno-omit-frame-pointer -gdwarf-4 -Iruntime

all: $(B)/bin/vigil-cc $(B)/lib/vigil-cc-transform.so $(B)/bin/vigil $(B)/lib/libvigil.a $(B)/lib/libvigil_common.a $(B)/lib/libvigil.so $(B)/lib/vigil.dynlist $(B)/include/vigil/vigil.h

# A tool's parts see the headers of the side they join, and the tools' public headers.
TOOL_INCLUDES := $(addprefix -I,$(wildcard tools/*/include))
$(call obj,host,$(COMPILER_SRC)): PART_FLAGS := $(LLVM_CFLAGS) -Icompiler
$(call obj,host,$(XFORM_SRC)): PART_FLAGS += -fPIC
# vigil-cc's build id (vigil-cc --version) is a hash of its sources, held by driver.o and by
# the transforming part's pipeline.o (the driver refuses a part of another build); both are
# rebuilt when any source changes.
VIGIL_CC_SOURCES := $(sort $(wildcard compiler/*.[ch] compiler/*.inc common/*.[ch] tools/*/compiler/*.[ch]))
VIGIL_CC_BUILD_ID := $(shell sha256sum $(VIGIL_CC_SOURCES) | sha256sum | cut -c1-16)
$(B)/obj/host/compiler/driver.o $(B)/obj/host/compiler/pipeline.o: $(VIGIL_CC_SOURCES)
$(B)/obj/host/compiler/driver.o $(B)/obj/host/compiler/pipeline.o: PART_FLAGS += -DVIGIL_CC_BUILD_ID=\"$(VIGIL_CC_BUILD_ID)\"
$(call obj,host,$(CMD_SRC)): PART_FLAGS := -Icmd
$(B)/obj/host/%.o: %.c
	@mkdir -p $(dir $@)
	$(HOSTCC) $(BASE) $(CFLAGS) $(PART_FLAGS) $(TOOL_INCLUDES) -MMD -MP -c $< -o $@
$(B)/obj/rt/%.o: %.c
	@mkdir -p $(dir $@)
	$(HOSTCC) $(BASE) $(CFLAGS) $(RT_FLAGS) $(TOOL_INCLUDES) -MMD -MP -c $< -o $@

# The driver exports its symbols (-rdynamic): the transforming part calls its services (running
# clang, temporary files, the cache's callbacks) and the common code it holds.
$(B)/bin/vigil-cc: $(call obj,host,$(DRIVER_SRC)) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(HOSTCC) -rdynamic $^ -o $@.tmp -ldl -lm && mv -f $@.tmp $@
$(B)/lib/vigil-cc-transform.so: $(call obj,host,$(XFORM_SRC))
	@mkdir -p $(dir $@)
	$(HOSTCC) -shared $^ -o $@.tmp $(LLVM_LIBS) -lm && mv -f $@.tmp $@
$(B)/bin/vigil: $(CMD_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(HOSTCC) $^ -o $@.tmp -ldw -lelf -lsqlite3 -lpq -lzstd -lm && mv -f $@.tmp $@
$(B)/lib/libvigil.a: $(RT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@.tmp && ar rcs $@.tmp $^ && mv -f $@.tmp $@
$(B)/lib/libvigil_common.a: $(RT_COMMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@.tmp && ar rcs $@.tmp $^ && mv -f $@.tmp $@
# nodelete: the runtime's exit and fork handlers must outlive a dlclose of libvigil.so.
$(B)/lib/libvigil.so: $(RT_OBJ) $(RT_COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(HOSTCC) -shared -Wl,-z,nodelete $^ -o $@.tmp -ldl -lpthread -lm && mv -f $@.tmp $@
# Symbols an executable built with vigil-cc exports, so that instrumented shared libraries it
# loads bind to its one copy of the runtime.
$(B)/lib/vigil.dynlist: runtime/vigil.dynlist
	@mkdir -p $(dir $@)
	cp $< $@
$(B)/include/vigil/vigil.h: include/vigil/vigil.h include/vigil/tool.h $(TOOL_HEADERS)
	@mkdir -p $(dir $@)
	cp include/vigil/*.h $(TOOL_HEADERS) $(dir $@)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# The runner builds first (make -j2), so a build failure is reported as a failed test.
test:
	bash tests/run.sh

# The 30-second tour, from build/ (works before install): build examples/demo.c with vigil-cc,
# run it under the leak tool, show the leak it finds (vigil leaks) and the per-site rates.
demo: all
	bash scripts/demo.sh

# vigil-cc and vigil find the runtime in ../lib next to their bin/ (libvigil.a and
# libvigil_common.a for links, libvigil.so for `vigil run`); the headers go where cc looks for
# <vigil/...> under PREFIX=/usr/local and /usr.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/vigil
	install -m 755 $(B)/bin/vigil-cc $(B)/bin/vigil $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/lib/libvigil.a $(B)/lib/libvigil_common.a $(B)/lib/vigil.dynlist $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/lib/libvigil.so $(B)/lib/vigil-cc-transform.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/vigil/*.h $(TOOL_HEADERS) $(DESTDIR)$(PREFIX)/include/vigil/

clean:
	rm -rf $(B)

.PHONY: all test demo install clean
