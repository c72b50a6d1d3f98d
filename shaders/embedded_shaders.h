#pragma once
// GLSL sources of shaders/*.vert|geom|frag, compiled into the binary by shaders/embed.cmake.
namespace clothlab {
// The source of shaders/<name> (e.g. "mesh.vert"), or nullptr if there is no such shader.
const char* embeddedShader(const char* name);
}  // namespace clothlab
