# Sourced by the scripts that run the viewer somewhere else than where they were typed (demo.sh
# changes to the repository root, random_input.sh runs it in its output folder).
# absolute_paths ARG...: sets ARGS to the arguments with paths made absolute: those naming files
# (a scene, an OBJ, an --obstacle), and what follows --screenshot and --log, which may not exist yet.
absolute_paths() {
  ARGS=()
  local previous= arg
  for arg in "$@"; do
    if [ -f "$arg" ] || [ "$previous" = --screenshot ] || [ "$previous" = --log ]; then
      ARGS+=("$(readlink -m "$arg")")
    else
      ARGS+=("$arg")
    fi
    previous=$arg
  done
}
