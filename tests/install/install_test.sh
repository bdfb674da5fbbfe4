#!/usr/bin/env bash
# `make install` into a temporary prefix, then a consumer project outside the tree built against
# it with CMake (find_package(Kiln), Kiln::kiln) and with pkg-config, each run on MODEL; then the
# installed `kiln` tool and Python package. Any failure fails the test.
# Usage: install_test.sh BUILD_DIR MODEL WORK_DIR PYTHON_INSTALL_DIR
set -euo pipefail
build=$1 model=$2 work=$3 python_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
step() { echo "install test: $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
libdir=$prefix/lib
[ -d "$libdir" ] || libdir=$(dirname "$(find "$prefix" -name 'libkiln.so' | head -1)")
# Not `objdump | grep -q`: grep's early exit would end objdump by SIGPIPE, which pipefail reports.
dynamic_section=$(objdump -p "$libdir/libkiln.so")
[[ "$dynamic_section" =~ SONAME\ +libkiln\.so\.0 ]] || { echo "libkiln.so has no SONAME libkiln.so.0"; exit 1; }
for f in "$prefix/include/kiln/kiln_c.h" "$prefix/include/kiln/session.h" "$libdir/cmake/Kiln/KilnConfig.cmake" \
         "$libdir/pkgconfig/kiln.pc" "$prefix/bin/kiln"; do
  [ -e "$f" ] || { echo "not installed: $f"; exit 1; }
done

step "a CMake consumer (find_package(Kiln))"
cmake -S "$here/consumer" -B "$work/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/consumer-cmake.log"
cmake --build "$work/cmake-consumer" -j2 > "$work/consumer-build.log"
LD_LIBRARY_PATH=$libdir "$work/cmake-consumer/consumer_cpp" "$model"
LD_LIBRARY_PATH=$libdir "$work/cmake-consumer/consumer_c" "$model"

step "a pkg-config consumer"
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c99 -Wall -Werror "$here/consumer/consumer.c" $(pkg-config --cflags --libs kiln) -o "$work/pc_consumer_c"
c++ -std=c++20 "$here/consumer/consumer.cpp" $(pkg-config --cflags --libs kiln) -o "$work/pc_consumer_cpp"
LD_LIBRARY_PATH=$libdir "$work/pc_consumer_c" "$model"
LD_LIBRARY_PATH=$libdir "$work/pc_consumer_cpp" "$model"

step "the installed kiln tool and Python package"
"$prefix/bin/kiln" inspect "$model" > /dev/null
[ "$python_dir" = none ] || PYTHONPATH=$prefix/$python_dir /usr/bin/python3 -c "
import sys, kiln
assert kiln.__file__.startswith('$prefix'), kiln.__file__
session = kiln.InferenceSession(sys.argv[1])
print('python', [o.name for o in session.get_outputs()], kiln.__version__)" "$model"
step "passed"
