# Sourced by the install scripts that need Debian packages: `apt_install WHO PACKAGE...` installs
# the packages with apt-get (as root, or through sudo), progress on stderr, no recommends. WHO
# names the calling script in its messages; a machine without apt-get or without a way to root
# gets one sentence saying what to install.

apt_install() {
  local who=$1
  shift
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$who: apt-get is not available; install $*" >&2
    exit 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "$who: run as root or install sudo: apt-get install $* needs root" >&2
      exit 1
    fi
    sudo="sudo"
  fi
  echo "$who: installing $* with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}
