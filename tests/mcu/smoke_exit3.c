/* Exits with status 3: the harness must see QEMU's exit status (tests/mcu/CMakeLists.txt expects 3). */
#include <stdio.h>

int main(void)
{
    printf("mcu smoke: exiting with 3\n");
    return 3;
}
