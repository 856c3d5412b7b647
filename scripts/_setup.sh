# Shared setup for scripts/run and scripts/test (sourced, not executed).
#
# Creates .venv on first use and installs the project (editable) with the
# requested extras; reinstalls only when pyproject.toml, the extras or the
# GPU flavour changed.  Where nvidia-smi reports a GPU, also installs the CuPy
# wheel that matches the driver's CUDA version.  On Debian/Ubuntu run as root,
# installs the few system libraries Qt needs when they are missing.
#
# Input:  SPECSCOPE_EXTRAS (e.g. "dev"), optional PYTHON (interpreter to use).
# Output: ROOT, VENV, VPY set; .venv ready.

set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
VPY="$VENV/bin/python"
EXTRAS="${SPECSCOPE_EXTRAS:-}"

_say() { printf 'specscope setup: %s\n' "$*" >&2; }

_pick_python() {
    local cand
    for cand in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [ -n "$cand" ] || continue
        if command -v "$cand" >/dev/null 2>&1 &&
           "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$cand"; return 0
        fi
    done
    _say "Python >= 3.11 is required (set PYTHON=/path/to/python3.11)"; return 1
}

_cuda_flavour() {
    # "cuda12x"-style suffix of the CuPy wheel for the driver, or "" without a GPU
    command -v nvidia-smi >/dev/null 2>&1 || { echo ""; return; }
    local ver
    ver=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\)\..*/\1/p' | head -n1)
    case "$ver" in
        11) echo "cuda11x" ;; 12) echo "cuda12x" ;; 1[3-9]) echo "cuda13x" ;; *) echo "" ;;
    esac
}

# Shared libraries Qt loads from the system, and the Debian packages that bring them
# ("a|b": the first package the archive knows; Debian 13 renamed some with t64).
# The xcb platform plugin (PyQt6/Qt6/plugins/platforms/libqxcb.so and the
# libQt6XcbQpa it links) needs every libxcb-* here; `ldd` on it lists them, and
# tests/journeys/test_qt_xcb.py fails on any it cannot find.
_QT_SYSTEM_LIBS="
libEGL.so.1:libegl1 libGL.so.1:libgl1 libGLX.so.0:libglx0 libOpenGL.so.0:libopengl0
libfontconfig.so.1:libfontconfig1 libfreetype.so.6:libfreetype6
libdbus-1.so.3:libdbus-1-3 libglib-2.0.so.0:libglib2.0-0t64|libglib2.0-0
libxkbcommon.so.0:libxkbcommon0 libxkbcommon-x11.so.0:libxkbcommon-x11-0
libX11.so.6:libx11-6 libX11-xcb.so.1:libx11-xcb1 libxcb.so.1:libxcb1
libxcb-cursor.so.0:libxcb-cursor0 libxcb-icccm.so.4:libxcb-icccm4
libxcb-image.so.0:libxcb-image0 libxcb-keysyms.so.1:libxcb-keysyms1
libxcb-randr.so.0:libxcb-randr0 libxcb-render.so.0:libxcb-render0
libxcb-render-util.so.0:libxcb-render-util0 libxcb-shape.so.0:libxcb-shape0
libxcb-shm.so.0:libxcb-shm0 libxcb-sync.so.1:libxcb-sync1 libxcb-util.so.1:libxcb-util1
libxcb-xfixes.so.0:libxcb-xfixes0 libxcb-xkb.so.1:libxcb-xkb1
libxcb-xinerama.so.0:libxcb-xinerama0 libxcb-xinput.so.0:libxcb-xinput0
libxcb-glx.so.0:libxcb-glx0
"

_qt_system_libs() {
    # Qt's wheels bring Qt itself but load these system libraries (the xcb
    # platform plugin most of them); cheap to check, so checked on every run.
    [ "$(uname -s)" = "Linux" ] || return 0
    command -v ldconfig >/dev/null 2>&1 || return 0
    local missing=() have pair lib pkgs
    have=$(ldconfig -p 2>/dev/null)
    for pair in $_QT_SYSTEM_LIBS; do
        lib=${pair%%:*}; pkgs=${pair#*:}
        grep -qF "$lib " <<<"$have" || missing+=("$pkgs")
    done
    # (not "fc-list | grep -q": grep stops early, fc-list gets SIGPIPE and pipefail fails it)
    [ -n "$(fc-list 2>/dev/null)" ] || missing+=(fonts-dejavu-core)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null 2>&1 || true
        local chosen=() alt cand
        for alt in "${missing[@]}"; do
            for cand in ${alt//|/ }; do
                if apt-cache show "$cand" >/dev/null 2>&1; then chosen+=("$cand"); break; fi
            done
        done
        [ ${#chosen[@]} -eq 0 ] && { _say "no Debian package found for ${missing[*]}"; return 0; }
        _say "installing system libraries for Qt: ${chosen[*]}"
        apt-get install -y -qq --no-install-recommends "${chosen[@]}" >/dev/null ||
            _say "could not install ${chosen[*]}; Qt may fail to start"
    else
        _say "Qt may need these system packages: ${missing[*]//|/ or }"
    fi
}

_setup() {
    local gpu stamp want log have_extras
    gpu=$(_cuda_flavour)
    want="$( (cat "$ROOT/pyproject.toml"; echo "gpu=$gpu") | sha256sum | cut -d' ' -f1)"
    stamp="$VENV/.specscope-installed"
    _qt_system_libs
    # the stamp holds the hash and the extras installed with it; a run needs no
    # extras, so a venv set up for the tests serves it too
    if [ -x "$VPY" ] && [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ]; then
        have_extras=$(sed -n 2p "$stamp")
        [ -z "$EXTRAS" ] && return 0
        # the dev extra holds every other extra but gpu (which setup picks by the driver)
        case ",$have_extras," in *",$EXTRAS,"*|*",dev,"*) return 0 ;; esac
    fi
    if [ ! -x "$VPY" ]; then
        local py; py=$(_pick_python)
        _say "creating $VENV with $($py --version 2>&1)"
        "$py" -m venv "$VENV"
    fi
    log="$VENV/install.log"
    local spec="$ROOT"
    [ -n "$EXTRAS" ] && spec="$ROOT[$EXTRAS]"
    _say "installing specscope${EXTRAS:+ [$EXTRAS]} (log: $log)"
    if ! { "$VPY" -m pip install -q --upgrade pip &&
           "$VPY" -m pip install -q -e "$spec"; } >"$log" 2>&1; then
        tail -n 30 "$log" >&2; _say "installation failed"; return 1
    fi
    if [ -n "$gpu" ]; then
        _say "GPU found: installing cupy-$gpu"
        # the dev extra brings cupy-cuda12x (for signature checks without a device); two
        # CuPy wheels in one environment break each other, so keep only the driver's
        if [ "$gpu" != "cuda12x" ]; then
            "$VPY" -m pip uninstall -q -y cupy-cuda12x >>"$log" 2>&1 || true
        fi
        "$VPY" -m pip install -q "cupy-$gpu" >>"$log" 2>&1 ||
            _say "could not install cupy-$gpu; continuing on the CPU"
    fi
    printf '%s\n%s\n' "$want" "$EXTRAS" >"$stamp"
}

_setup
