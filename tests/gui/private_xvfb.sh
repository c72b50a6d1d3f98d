# Sourced by the GUI test and scripts/random_input.sh. start_private_xvfb DIR starts an X server on
# a free display (its log in DIR/xvfb.log), waits for it, exports DISPLAY and sets XVFB_PID.
# Recent files and other settings stay in DIR/config (XDG_CONFIG_HOME).
start_private_xvfb() {
  exec 3> "$1/displayfd"
  Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp -noreset > "$1/xvfb.log" 2>&1 &
  XVFB_PID=$!
  exec 3>&-
  for _ in $(seq 100); do [ -s "$1/displayfd" ] && break; sleep 0.1; done
  export DISPLAY=:$(head -n1 "$1/displayfd")
  export XDG_CONFIG_HOME="$1/config"
}
