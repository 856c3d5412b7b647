# Shared setup for scripts/run and scripts/test (sourced, not executed).
#
# Creates .venv on first use and installs the project (editable) with the
# requested extras; reinstalls only when pyproject.toml, the extras or the
# GPU flavour changed.  Where nvidia-smi reports a GPU, also installs the CuPy
# wheel that matches the driver's CUDA version.  On Debian/Ubuntu run as root,
# installs the few system libraries Qt needs when they are missing, and with the dev
# extra the Debian packages the tests start (.ci/apt-packages.txt), so that the
# README's test command runs what CI runs; not root, it says which suites skip.
#
# Input:  SPECSCOPE_EXTRAS (e.g. "dev"), optional PYTHON (interpreter to use);
#         SPECSCOPE_SETUP_DRY_RUN=1 prints the apt-get commands instead of running them;
#         SPECSCOPE_SETUP_FUNCTIONS_ONLY=1 defines the functions and sets up nothing
#         (the tests call them); SPECSCOPE_APT_LOCK_WAIT_S: how long to wait for
#         another apt's lock (default 300).
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

_dry_run() { [ "${SPECSCOPE_SETUP_DRY_RUN:-}" = "1" ]; }

_can_apt() {
    # root on a system with apt
    [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1
}

_APT_LOCK_WAIT_S="${SPECSCOPE_APT_LOCK_WAIT_S:-300}"
_APT_UPDATED=""

_apt_get() {
    # apt-get, waiting (bounded) for another apt or dpkg that holds the dpkg lock
    if _dry_run; then
        _say "dry run: apt-get -o DPkg::Lock::Timeout=$_APT_LOCK_WAIT_S $*"; return 0
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$_APT_LOCK_WAIT_S" "$@"
}

_apt_update() {
    # once a run.  apt-get update takes the lists lock, which DPkg::Lock::Timeout does not
    # cover (apt 2.6): while another apt holds it, try again every 2 s for up to
    # _APT_LOCK_WAIT_S; any other failure (a mirror's hiccup) is retried once
    [ -n "$_APT_UPDATED" ] && return 0
    _APT_UPDATED=1
    if _dry_run; then _apt_get update -qq; return 0; fi
    local out start=$SECONDS waited="" retried=""
    while :; do
        out=$(LC_ALL=C _apt_get update -qq 2>&1) && return 0  # (C: the lock message read below)
        if grep -q "Could not get lock" <<<"$out" && (( SECONDS - start < _APT_LOCK_WAIT_S )); then
            [ -n "$waited" ] ||
                _say "another apt holds the package lists; waiting up to ${_APT_LOCK_WAIT_S} s"
            waited=1
            sleep 2
            continue
        fi
        if [ -z "$retried" ]; then
            retried=once; _say "apt-get update failed; trying once more"; continue
        fi
        _say "apt-get update failed: $(grep -v '^ *$' <<<"$out" | tail -n1); using the package lists there are"
        return 1
    done
}

_apt_known() {
    # those of the given packages the package lists can install, one a line (one
    # apt-cache call: each takes most of a second)
    apt-cache policy "$@" 2>/dev/null | awk '
        /^[^ ].*:$/ { name = substr($0, 1, length($0) - 1) }
        /^  Candidate:/ && $2 != "(none)" { print name }'
}

_apt_install() {
    # _apt_install WHAT PKG... : install what the archive has of PKG ("a|b": the first it
    # knows), saying in one line what, for WHAT; 1 when some could not be installed
    local what=$1; shift
    _apt_update || true
    local known chosen=() unknown=() alt cand found
    # shellcheck disable=SC2046 # one word a package
    known=$(_apt_known $(printf '%s\n' "$@" | tr '|' '\n'))
    for alt in "$@"; do
        found=""
        for cand in ${alt//|/ }; do
            if grep -qxF "$cand" <<<"$known"; then found=$cand; break; fi
        done
        if [ -n "$found" ]; then chosen+=("$found"); else unknown+=("${alt//|/ or }"); fi
    done
    [ ${#unknown[@]} -eq 0 ] || _say "the package lists have no ${unknown[*]} (for $what)"
    [ ${#chosen[@]} -eq 0 ] && return 1
    _say "installing $what: ${chosen[*]}"
    if ! _apt_get install -y -qq --no-install-recommends "${chosen[@]}" >/dev/null; then
        _say "could not install ${chosen[*]}"; return 1
    fi
    [ ${#unknown[@]} -eq 0 ]
}

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
    if _can_apt; then
        _apt_install "system libraries for Qt" "${missing[@]}" ||
            _say "Qt may fail to start without ${missing[*]//|/ or }"
    else
        _say "Qt may need these system packages: ${missing[*]//|/ or }"
    fi
}

# the suite of the tests that each package of .ci/apt-packages.txt serves
_suite_of() {
    case "$1" in
        xvfb|xdotool|imagemagick|x11-utils|openbox) echo "the journeys in tests/journeys" ;;
        chromium|chromium-driver) echo "the browser suite in tests/browser" ;;
        pulseaudio|pulseaudio-utils|libportaudio2|libasound2-plugins)
            echo "the sound-server tests in tests/compute/playback/test_sound_server.py" ;;
        hdf5-tools) echo "the h5dump checks of killed recordings" ;;
        *) echo "the tests that need $1" ;;
    esac
}

_skipped_suites() {
    # "suite (without pkg pkg); suite (without pkg)" for the packages given
    local pkg p suite out="" seen="|" of
    for pkg in "$@"; do
        suite=$(_suite_of "$pkg")
        case "$seen" in *"|$suite|"*) continue ;; esac
        seen="$seen$suite|"
        of=""
        for p in "$@"; do [ "$(_suite_of "$p")" = "$suite" ] && of="${of:+$of }$p"; done
        out="${out:+$out; }$suite (without $of)"
    done
    echo "$out"
}

_missing_debs() {
    # those of the given Debian packages that are not installed
    local pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null) || status=""
        [[ "$status" == ii* ]] || echo "$pkg"
    done
}

_test_system_packages() {
    # The Debian packages the tests start (.ci/apt-packages.txt: Xvfb, Chromium, PulseAudio...):
    # as root with apt, install the missing ones; otherwise say which suites will skip.
    local list="$ROOT/.ci/apt-packages.txt" pkgs missing
    [ -f "$list" ] || return 0
    read -r -a pkgs <<<"$(sed -e 's/#.*//' "$list" | xargs)"
    [ ${#pkgs[@]} -eq 0 ] && return 0
    if ! command -v dpkg-query >/dev/null 2>&1; then
        _say "not a Debian system: the suites that need $(basename "$list")'s packages" \
             "skip where those are missing"
        return 0
    fi
    read -r -a missing <<<"$(_missing_debs "${pkgs[@]}" | xargs)"
    [ ${#missing[@]} -eq 0 ] && return 0
    if _can_apt; then
        _apt_install "the packages the tests start (.ci/apt-packages.txt)" "${missing[@]}" &&
            return 0
        _dry_run && return 0
        read -r -a missing <<<"$(_missing_debs "${missing[@]}" | xargs)"
        [ ${#missing[@]} -eq 0 ] && return 0
        _say "skipped for want of ${missing[*]}: $(_skipped_suites "${missing[@]}")"
    elif [ "$(id -u)" != "0" ]; then
        _say "not root, so not installing ${missing[*]}; skipped: $(_skipped_suites "${missing[@]}");" \
             "to run them: sudo apt-get install ${missing[*]}"
    else
        _say "no apt-get to install ${missing[*]}; skipped: $(_skipped_suites "${missing[@]}")"
    fi
}

_setup() {
    local gpu stamp want log have_extras
    gpu=$(_cuda_flavour)
    want="$( (cat "$ROOT/pyproject.toml"; echo "gpu=$gpu") | sha256sum | cut -d' ' -f1)"
    stamp="$VENV/.specscope-installed"
    _qt_system_libs
    case ",$EXTRAS," in *",dev,"*) _test_system_packages ;; esac
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

[ "${SPECSCOPE_SETUP_FUNCTIONS_ONLY:-}" = "1" ] || _setup
