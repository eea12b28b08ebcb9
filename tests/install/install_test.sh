#!/bin/bash
# install: `cmake --install` into a fresh prefix, then use it as an outside project would
# (docs/INSTALL.md): the files are there; the shared libraries export only the API declared in
# include/tosac/ and the static ones keep only those names global (an application's own cvt_relu
# does not clash); every public header compiles alone in C and C++; an external C program built
# with pkg-config and three built with find_package(tosac) run models and give `tosac run`'s
# outputs bit for bit.
# usage: install_test.sh BUILD_DIR WORK_DIR
set -u
BUILD=$1 W=$2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$W" && mkdir -p "$W" || exit 1
P=$W/prefix
cmake --install "$BUILD" --prefix "$P" > "$W/install.log" || { cat "$W/install.log"; exit 1; }

for f in bin/tosac lib/libtosac.so.0 lib/libtosac.a lib/libtosac_rt.so.0 lib/libtosac_rt.a \
         lib/pkgconfig/tosac.pc lib/pkgconfig/tosac_rt.pc lib/cmake/tosac/tosacConfig.cmake \
         lib/cmake/tosac/tosacConfigVersion.cmake include/tosac/runtime.h include/tosac/ops.def \
         share/doc/tosac/LICENSE; do
    [ -e "$P/$f" ] || fail "$f not installed"
done
for l in tosac tosac_rt; do
    soname=$(objdump -p "$P/lib/lib$l.so" | awk '/SONAME/ {print $2}')
    [ "$soname" = "lib$l.so.0" ] || fail "lib$l.so SONAME is '$soname'"
done
objdump -p "$P/lib/libtosac_rt.so" | grep -q 'NEEDED.*protobuf' && fail "libtosac_rt.so needs protobuf-c"

# The API: every function name declared in the installed headers.
cat "$P"/include/tosac/*.h | grep -o 'tosac_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u > "$W/declared"
for l in tosac tosac_rt; do
    nm -D --defined-only "$P/lib/lib$l.so" | awk '{print $3}' | sort -u > "$W/$l.exported"
    bad=$(grep -v '^tosac_' "$W/$l.exported" | head -5)
    [ -z "$bad" ] || fail "lib$l.so exports non-tosac_ symbols: $bad"
    bad=$(comm -23 "$W/$l.exported" "$W/declared" | head -5)
    [ -z "$bad" ] || fail "lib$l.so exports names no public header declares: $bad"
    nm --defined-only -g "$P/lib/lib$l.a" | awk 'NF == 3 {print $3}' | sort -u > "$W/$l.global"
    bad=$(grep -v '^tosac_' "$W/$l.global" | head -5)
    [ -z "$bad" ] || fail "lib$l.a has global non-tosac_ symbols: $bad"
done
grep -qx tosac_program_create "$W/tosac_rt.exported" || fail "libtosac_rt.so lacks tosac_program_create"
grep -qx tosac_onnx_compile "$W/tosac.exported" || fail "libtosac.so lacks tosac_onnx_compile"
grep -qx tosac_onnx_compile "$W/tosac_rt.exported" && fail "libtosac_rt.so has the ONNX front end"

# Each public header on its own, C11 and C++.
for h in "$P"/include/tosac/*.h; do
    echo "#include \"tosac/$(basename "$h")\"" > "$W/h.c"
    gcc -std=c11 -Wall -Wextra -Werror -pedantic -I"$P/include" -c "$W/h.c" -o /dev/null 2> "$W/h.err" ||
        fail "$(basename "$h") does not compile alone in C: $(head -2 "$W/h.err")"
    g++ -x c++ -std=c++11 -Wall -Wextra -Werror -I"$P/include" -c "$W/h.c" -o /dev/null 2> "$W/h.err" ||
        fail "$(basename "$h") does not compile alone in C++: $(head -2 "$W/h.err")"
done

# References: the installed tosac command's outputs.
"$P/bin/tosac" run "$SRC/examples/small_cnn.onnx" -i x="$SRC/examples/small_cnn_input.npy" -o "$W/ref_cnn" > /dev/null ||
    fail "installed tosac run small_cnn.onnx"
"$P/bin/tosac" run "$SRC/examples/conv_int8.tosa" -i input="$SRC/examples/conv_int8_input.npy" -o "$W/ref_conv" > /dev/null ||
    fail "installed tosac run conv_int8.tosa"
same() { # DIR_A DIR_B: the same .npy names with equal dtype, shape and bytes
    "$PY" - "$1" "$2" <<'PYEOF'
import os, sys, numpy as np
a, b = sys.argv[1], sys.argv[2]
na, nb = sorted(os.listdir(a)), sorted(os.listdir(b))
if na != nb or not na: sys.exit("outputs %s vs %s" % (na, nb))
for n in na:
    x, y = np.load(os.path.join(a, n)), np.load(os.path.join(b, n))
    if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes(): sys.exit("%s differs" % n)
PYEOF
}

# pkg-config: the shared library, then the static one with an application symbol named like ours.
export PKG_CONFIG_PATH=$P/lib/pkgconfig
cat > "$W/clash.c" <<'CEOF'
/* An application's own functions that share names with tosac internals. */
int cvt_relu(void);
int ir_compact(void);
int cvt_relu(void) { return 41; }
int ir_compact(void) { return 1; }
CEOF
if gcc -std=c11 -Wall -Werror -DWITH_ONNX "$SRC/examples/c/run_model.c" "$W/clash.c" -o "$W/pc_run" \
       $(pkg-config --cflags --libs tosac) -Wl,-rpath,"$P/lib" 2> "$W/pc.err"; then
    mkdir -p "$W/pc_cnn" && "$W/pc_run" "$SRC/examples/small_cnn.onnx" "$W/pc_cnn" "$SRC/examples/small_cnn_input.npy" > /dev/null &&
        same "$W/ref_cnn" "$W/pc_cnn" || fail "pkg-config (shared) program: wrong or no outputs"
else fail "pkg-config (shared) build: $(head -3 "$W/pc.err")"; fi
if gcc -std=c11 -Wall -Werror -DWITH_ONNX "$SRC/examples/c/run_model.c" "$W/clash.c" -o "$W/pc_static" \
       $(pkg-config --cflags tosac) "$P/lib/libtosac.a" $(pkg-config --static --libs-only-l tosac | sed 's/-ltosac //') 2> "$W/pcs.err"; then
    mkdir -p "$W/pcs_cnn" && "$W/pc_static" "$SRC/examples/small_cnn.onnx" "$W/pcs_cnn" "$SRC/examples/small_cnn_input.npy" > /dev/null &&
        same "$W/ref_cnn" "$W/pcs_cnn" || fail "pkg-config (static) program: wrong or no outputs"
else fail "pkg-config (static) build: $(head -3 "$W/pcs.err")"; fi

# find_package(tosac): runtime-only, whole shared and whole static.
if cmake -S "$SRC/examples/c" -B "$W/ex" -G Ninja -DCMAKE_PREFIX_PATH="$P" > "$W/ex.log" 2>&1 &&
   cmake --build "$W/ex" >> "$W/ex.log" 2>&1; then
    mkdir -p "$W/ex_conv" "$W/ex_cnn" "$W/ex_cnn_static"
    "$W/ex/run_model_rt" "$SRC/examples/conv_int8.tosa" "$W/ex_conv" "$SRC/examples/conv_int8_input.npy" > /dev/null &&
        same "$W/ref_conv" "$W/ex_conv" || fail "find_package tosac::tosac_rt program: wrong or no outputs"
    "$W/ex/run_model_rt" "$SRC/examples/small_cnn.onnx" "$W/ex_cnn" "$SRC/examples/small_cnn_input.npy" > /dev/null 2>&1 &&
        fail "the runtime-only program ran an ONNX model"
    "$W/ex/run_model" "$SRC/examples/small_cnn.onnx" "$W/ex_cnn" "$SRC/examples/small_cnn_input.npy" > /dev/null &&
        same "$W/ref_cnn" "$W/ex_cnn" || fail "find_package tosac::tosac program: wrong or no outputs"
    "$W/ex/run_model_static" "$SRC/examples/small_cnn.onnx" "$W/ex_cnn_static" "$SRC/examples/small_cnn_input.npy" > /dev/null &&
        same "$W/ref_cnn" "$W/ex_cnn_static" || fail "find_package tosac::tosac_static program: wrong or no outputs"
else fail "find_package build: $(tail -5 "$W/ex.log")"; fi

echo "$fails failed"
[ $fails -eq 0 ]
