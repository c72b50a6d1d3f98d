#version 330 core
// Two-sided Lambert + Blinn-Phong with a hemisphere ambient term. The back side gets its own
// colour so folds read clearly. With uHeat set, the colour comes from the per-vertex scalar
// through the colour map (blue -> cyan -> green -> yellow -> red over [0, uHeatMax]). With
// uPattern set, the cloth's checks or grid lines darken it, printed in its material coordinates
// (render/pattern.h), over either colour.
in vec3 vWorld;
in vec3 vNormal;
in float vScalar;
in vec3 vMaterial;
flat in int vRound;  // 0: plain flat coordinates; k: in uRound*[k - 1] (render/pattern.h)

uniform vec3 uEye;
uniform vec3 uLightDir;     // towards the light, unit; below the horizon when seen from below
uniform float uLightStrength;  // the direct light's share: 1, less for the light seen from below
uniform vec3 uFrontColor;
uniform vec3 uBackColor;
uniform bool uHeat;
uniform float uHeatMax;
uniform bool uShadowPass;   // draw a flat translucent shadow
uniform float uAlpha;
uniform int uPattern;          // 0 none, 1 checks, 2 grid lines (ClothPattern)
uniform int uPatternKind;      // 0: flat rest coordinates (vRound says how); 1: rest (x, y, z)
uniform float uPatternSize;    // the cells' side [m]
// The pieces that close round (render/pattern.h PatternRound), kMaxPatternRounds of them at most.
uniform float uRoundPeriod[8];  // > 0: a cylinder's once round [m]; vMaterial (R cos(u / R), v, R sin(u / R))
uniform float uRoundAngle[8];   // else a cone's sector [rad]; vMaterial r (cos phi, sin phi, 0)
uniform vec2 uRoundApex[8];     // the cone's apex [m]
uniform float uRoundFrom[8];    // the sector's first side [rad], where phi = 0
uniform float uRoundCell[8];    // the cells' side drawn on it [m]

out vec4 fragColor;

vec3 heat(float s) {
  float x = clamp(s, 0.0, 1.0);
  vec3 c0 = vec3(0.10, 0.20, 0.85), c1 = vec3(0.05, 0.75, 0.90), c2 = vec3(0.20, 0.80, 0.25),
       c3 = vec3(0.95, 0.85, 0.15), c4 = vec3(0.90, 0.15, 0.10);
  if (x < 0.25) return mix(c0, c1, x / 0.25);
  if (x < 0.50) return mix(c1, c2, (x - 0.25) / 0.25);
  if (x < 0.75) return mix(c2, c3, (x - 0.50) / 0.25);
  return mix(c3, c4, (x - 0.75) / 0.25);
}

// The square wave of period 2 (+1 on [0, 1), -1 on [1, 2)) averaged over a pixel's footprint w
// around x: the change of its integral, the triangle wave 1 - |1 - mod(x, 2)|, across it. Cells
// much smaller than a pixel average to grey instead of flickering.
float filteredSquare(float x, float w) {
  w = max(w, 1e-4);
  float above = 1.0 - abs(1.0 - mod(x + 0.5 * w, 2.0));
  float below = 1.0 - abs(1.0 - mod(x - 0.5 * w, 2.0));
  return (above - below) / w;
}

// Coverage of a line about a pixel wide at each integer x, over a footprint of w; the lines fade
// out where they would be closer than about four pixels.
float gridLine(float x, float w) {
  w = max(w, 1e-6);
  float pixels = abs(x - floor(x + 0.5)) / w;
  return (1.0 - smoothstep(0.5, 1.3, pixels)) * (1.0 - smoothstep(0.12, 0.3, w));
}

// How much of the pattern's dark tone this fragment takes, 0 to 1.
float patternShade() {
  const float turn = 6.28318530718;
  vec3 p = vMaterial, w = fwidth(vMaterial);
  float size = uPatternSize;
  if (uPatternKind == 0 && vRound > 0) {
    int k = vRound - 1;
    size = uRoundCell[k];
    if (uRoundPeriod[k] > 0.0) {
      p = vec3(uRoundPeriod[k] / turn * atan(vMaterial.z, vMaterial.x), vMaterial.y, 0.0);
      w = vec3(length(w.xz), w.y, 0.0);
    } else {
      // The angle from the sector's first side, back from phi: a fragment past the last side
      // (within a triangle across the cut) lands on the first, where the print breaks.
      float a = uRoundAngle[k] * fract(atan(vMaterial.y, vMaterial.x) / turn);
      p = vec3(uRoundApex[k] + length(vMaterial.xy) * vec2(cos(uRoundFrom[k] + a), sin(uRoundFrom[k] + a)), 0.0);
      // Round the apex phi spreads the sector's angles over a whole turn: the footprint on the
      // sector is at most the one on (x, y).
      float f = length(w.xy);
      w = vec3(f, f, 0.0);
    }
  }
  p /= size;
  w /= size;
  bool solid = uPatternKind == 1;
  if (uPattern == 1) {
    float c = filteredSquare(p.x, w.x) * filteredSquare(p.y, w.y);
    if (solid) c *= filteredSquare(p.z, w.z);
    return 0.5 - 0.5 * c;
  }
  float line = max(gridLine(p.x, w.x), gridLine(p.y, w.y));
  if (solid) line = max(line, gridLine(p.z, w.z));
  return line;
}

void main() {
  if (uShadowPass) {
    fragColor = vec4(0.0, 0.0, 0.0, uAlpha);
    return;
  }
  vec3 n = normalize(vNormal);
  vec3 view = normalize(uEye - vWorld);
  bool back = dot(n, view) < 0.0;
  if (back) n = -n;
  vec3 base = back ? uBackColor : uFrontColor;
  if (uHeat) base = heat(vScalar / max(uHeatMax, 1e-12));
  if (uPattern == 1) base *= 1.0 - 0.3 * patternShade();
  if (uPattern == 2) base *= 1.0 - 0.6 * patternShade();
  float diffuse = uLightStrength * max(dot(n, uLightDir), 0.0);
  // The sky is on the light's side: above, unless the renderer mirrored the light to show
  // the scene from below the ground.
  float up = uLightDir.y < 0.0 ? -1.0 : 1.0;
  float fill = max(dot(n, normalize(vec3(-uLightDir.x, 0.3 * up, -uLightDir.z))), 0.0);
  float hemi = 0.5 + 0.5 * up * n.y;
  vec3 h = normalize(uLightDir + view);
  float spec = uLightStrength * pow(max(dot(n, h), 0.0), 48.0) * 0.18;
  vec3 color = base * (0.30 + 0.20 * hemi + 0.55 * diffuse + 0.15 * fill) + vec3(spec);
  fragColor = vec4(pow(color, vec3(1.0 / 1.1)), uAlpha);
}
