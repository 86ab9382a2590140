# Sourced by the GPU-machine scripts that run the Vulkan backend: that machine has NVIDIA's
# driver but no Vulkan loader, which comes as carried .debs in .gl/ (unpacked here), and its
# ICD file lies outside the loader's search path. .gl needs the device README's whole set, made
# here once: apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2
# (NVIDIA's ICD is libGLX_nvidia, which needs libglvnd; with libvulkan1 alone vkCreateInstance
# said VK_ERROR_INCOMPATIBLE_DRIVER on the H100, 2026-12-07).
if compgen -G ".gl/*.deb" >/dev/null; then
  for deb in .gl/*.deb; do dpkg -x "$deb" /; done
  ldconfig
fi
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV_ICD" ] &&
  ! grep -qs nvidia /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json; then
  export VK_DRIVER_FILES=$NV_ICD
fi
